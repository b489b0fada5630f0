// The palette: the block library grouped by category, searched by name,
// summary and parameter documentation, with the documentation of the
// entry under the pointer (or focused) shown below the list, and which
// to use where a name alone does not say (Output or Outport).
import { forwardRef, useState } from 'react';
import { Badge, Box, Flex, Text, TextField } from '@radix-ui/themes';
import { MagnifyingGlassIcon } from '@radix-ui/react-icons';
import { categoryOf, searchLibrary } from './categories.js';

/** What a parameter is: its description, or the values it may take. */
function describe(param) {
  return param?.description || (param?.enum ? `one of ${param.enum.filter((v) => v !== null).join(', ')}` : '');
}

/** Which block to use, for those whose names alone do not say it. */
const WHICH = {
  Output: 'Use Output to record a signal of the model and expose it to I/O. Inside a subsystem, an Outport is the subsystem’s own output port instead.',
  Outport: 'A subsystem’s output port, linked outside it. At the top level use Output (an Outport there is one, so only Output is offered).',
};

function Docs({ entry }) {
  if (!entry) {
    return (
      <Text size="1" color="gray" as="p">
        Hover over a block to read about it; drag it onto the canvas or double-click it to add it.
      </Text>
    );
  }
  const category = categoryOf(entry.type);
  const params = Object.entries(entry.params || {});
  return (
    <div data-testid="block-docs">
      <Flex align="center" gap="2" mb="1">
        <Text size="2" weight="bold">
          {entry.type}
        </Text>
        <Badge size="1" color={category.color} variant="soft">
          {category.name}
        </Badge>
      </Flex>
      <Text size="1" as="p" className="docs-summary">
        {entry.summary}
      </Text>
      {WHICH[entry.type] && (
        <Text size="1" as="p" className="docs-which" data-testid="block-which">
          {WHICH[entry.type]}
        </Text>
      )}
      {params.length > 0 && (
        <dl className="docs-params">
          {params.map(([name, p]) => (
            <div key={name}>
              <dt>
                <code>{name}</code>
                {(entry.required || []).includes(name) && (
                  <Badge size="1" color="red" variant="soft" ml="1">
                    required
                  </Badge>
                )}
              </dt>
              <dd>{describe(p)}</dd>
            </div>
          ))}
        </dl>
      )}
    </div>
  );
}

/** The palette; `onAdd(type)` adds a block of `type` to the diagram. */
export const Palette = forwardRef(function Palette({ library, onAdd }, searchRef) {
  const [query, setQuery] = useState('');
  const [shown, setShown] = useState(null);
  const groups = searchLibrary(library, query);
  const entry = library.find((b) => b.type === shown);
  return (
    <aside className="palette" aria-label="palette">
      <Box p="2" pb="1">
        <TextField.Root
          ref={searchRef}
          size="2"
          placeholder="Search blocks  /"
          aria-label="search blocks"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Escape') e.currentTarget.blur();
            if (e.key === 'Enter' && groups.length) onAdd(groups[0].blocks[0].type);
          }}
        >
          <TextField.Slot>
            <MagnifyingGlassIcon />
          </TextField.Slot>
        </TextField.Root>
      </Box>
      <div className="palette-list">
        <Box px="2" pb="2">
          {groups.length === 0 && (
            <Text size="1" color="gray" as="p" data-testid="palette-empty">
              No block matches “{query}”.
            </Text>
          )}
          {groups.map((group) => (
            <section key={group.name} className="palette-group" aria-label={group.name}>
              <Text as="div" size="1" weight="medium" color="gray" className="palette-group-name">
                {group.name}
              </Text>
              {group.blocks.map((b) => (
                <div
                  key={b.type}
                  className={`palette-item cat-${group.color}${shown === b.type ? ' palette-item-shown' : ''}`}
                  draggable
                  role="button"
                  tabIndex={0}
                  title={`${b.type}: drag onto the canvas or double-click to add`}
                  data-testid={`palette-${b.type}`}
                  onDragStart={(e) => {
                    e.dataTransfer.setData('application/tandem-block', b.type);
                    e.dataTransfer.effectAllowed = 'copy';
                  }}
                  onDoubleClick={() => onAdd(b.type)}
                  onKeyDown={(e) => e.key === 'Enter' && onAdd(b.type)}
                  onMouseEnter={() => setShown(b.type)}
                  onFocus={() => setShown(b.type)}
                >
                  <span className="palette-glyph" aria-hidden="true">
                    {group.glyph}
                  </span>
                  <span className="palette-name">{b.type}</span>
                </div>
              ))}
            </section>
          ))}
        </Box>
      </div>
      <div className="palette-docs">
        <Box p="2">
          <Docs entry={entry} />
        </Box>
      </div>
    </aside>
  );
});
