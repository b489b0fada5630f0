// The side panel: the selected block's id, parameters and sample time;
// the alignment of several selected blocks; or, with nothing selected,
// the model's name, description and simulation settings.
import { useEffect, useState } from 'react';
import { Badge, Box, Checkbox, Flex, Heading, IconButton, Separator, Text, TextArea, TextField, Tooltip } from '@radix-ui/themes';
import { parse, setMember, stringify } from '../model.js';
import { categoryOf } from './categories.js';
import { ALIGNMENTS } from './Toolbar.jsx';
import { Choice, Field } from '../components/fields.jsx';

/** A field committed on Enter or when it loses focus; `read(text)` throws on bad input. */
function CommitField({ label, value, onCommit, read = (t) => t, placeholder, hint, area = false }) {
  const [text, setText] = useState(value);
  const [bad, setBad] = useState('');
  useEffect(() => {
    setText(value);
    setBad('');
  }, [value]);
  const commit = () => {
    if (text === value) return;
    try {
      onCommit(read(text));
      setBad('');
    } catch (e) {
      setBad(e.message);
    }
  };
  const Input = area ? TextArea : TextField.Root;
  return (
    <Field label={label} hint={hint} error={bad}>
      <Input
        size="1"
        aria-label={label}
        aria-invalid={bad ? true : undefined}
        color={bad ? 'red' : undefined}
        value={text}
        placeholder={placeholder}
        onChange={(e) => setText(e.target.value)}
        onBlur={commit}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !(area && e.shiftKey)) {
            if (area) e.preventDefault();
            commit();
          }
        }}
        resize={area ? 'vertical' : undefined}
      />
    </Field>
  );
}

/** `text` as a JSON value, numbers keeping their literal; empty is absent. */
function readJson(text) {
  if (text.trim() === '') return undefined;
  try {
    return parse(text);
  } catch {
    throw new Error('not a JSON value (numbers, lists in [ ], strings in " ")');
  }
}

/** One parameter: a checkbox for flags, a menu for a list of choices, a text field otherwise. */
function ParamField({ name, schema, value, onChange }) {
  const kind = String(schema?.$ref || schema?.type || '');
  const description = schema?.description;
  if (kind.includes('boolean') || kind.endsWith('/flag') || typeof value === 'boolean') {
    return (
      <Text as="label" size="1" className="field field-check" title={description}>
        <Checkbox size="1" aria-label={`param ${name}`} checked={value === true} onCheckedChange={(c) => onChange(c === true)} />
        <span>{name}</span>
      </Text>
    );
  }
  if (Array.isArray(schema?.enum) && schema.enum.every((v) => typeof v === 'string' || v === null)) {
    const choices = schema.enum.filter((v) => v !== null);
    return (
      <Field label={name} title={description}>
        <Choice label={`param ${name}`} className="field-select" value={typeof value === 'string' ? value : ''} options={choices} fallback="(default)" onChange={onChange} />
      </Field>
    );
  }
  const isString = kind.includes('string') && typeof value !== 'object';
  const shown = value === undefined ? '' : isString ? String(value) : stringify(value);
  return (
    <CommitField
      label={`param ${name}`}
      value={shown}
      hint={description}
      read={isString ? (t) => (t === '' ? undefined : t) : readJson}
      onCommit={onChange}
    />
  );
}

/** The form of one selected block. */
function BlockForm({ block, entry, onRename, onParam, onSampleTime }) {
  const names = Array.from(new Set([...Object.keys(entry?.params || {}), ...Object.keys(block.params || {})]));
  const category = categoryOf(block.type);
  return (
    <div className="form" data-testid="block-form">
      <Flex align="center" gap="2">
        <span className={`block-glyph cat-${category.color}`} aria-hidden="true">
          {category.glyph}
        </span>
        <Heading size="3">{block.type}</Heading>
        <Badge size="1" variant="soft" color={category.color}>
          {category.name}
        </Badge>
      </Flex>
      {entry?.summary && (
        <Text size="1" color="gray" as="p" mt="1">
          {entry.summary}
        </Text>
      )}
      <Separator size="4" my="2" />
      <CommitField label="block id" value={block.id} onCommit={onRename} />
      {names.map((name) => (
        <ParamField
          key={`${block.id}:${name}`}
          name={name}
          schema={entry?.params?.[name]}
          value={block.params?.[name]}
          onChange={(v) => onParam(name, v)}
        />
      ))}
      {block.type !== 'Subsystem' && (
        <CommitField
          key={`${block.id}:sample_time`}
          label="param sample_time"
          value={block.sample_time === undefined ? '' : stringify(block.sample_time)}
          hint="-1 or empty: inherited; 0: continuous; T or [T, offset]: discrete"
          read={readJson}
          onCommit={onSampleTime}
        />
      )}
    </div>
  );
}

/** A positive number literal, or absent when empty. */
function readPositive(text) {
  if (text.trim() === '') return undefined;
  const v = readJson(text);
  const isNumber = typeof v === 'number' || v?.isLosslessNumber === true;
  if (!isNumber || !(Number(String(v)) > 0)) throw new Error('must be a number > 0');
  return v;
}

const SOLVERS = ['euler', 'heun', 'rk4', 'bdf'];
/** Settings only the BDF reads, shown only when it is the solver. */
const BDF_ONLY = ['rtol', 'atol'];
const SETTINGS = [
  ['step', 'step in seconds (bdf: output interval)', '0.001'],
  ['stop', 'stop time in seconds', '10'],
  ['rtol', 'relative tolerance (bdf)', '1e-6'],
  ['atol', 'absolute tolerance (bdf)', '1e-8'],
];

/** The model's name, description and simulation settings. */
function ModelForm({ doc, onSet, onSimulation }) {
  const sim = doc.simulation || {};
  const text = (v) => (v === undefined ? '' : typeof v === 'string' ? v : stringify(v));
  return (
    <div className="form" data-testid="model-form">
      <Heading size="3">Model</Heading>
      <Text size="1" color="gray" as="p" mt="1">
        Nothing is selected: these settings belong to the whole model.
      </Text>
      <Separator size="4" my="2" />
      <CommitField label="model name" value={text(doc.name)} onCommit={(v) => onSet('name', v || undefined)} />
      <CommitField label="model description" area value={text(doc.description)} onCommit={(v) => onSet('description', v || undefined)} />
      <Heading size="2" mt="3" mb="1">
        Simulation
      </Heading>
      <Field label="solver">
        <Choice
          label="simulation solver"
          className="field-select"
          value={SOLVERS.includes(sim.solver) ? sim.solver : ''}
          options={SOLVERS}
          fallback="(default: rk4)"
          onChange={(v) => onSimulation('solver', v)}
        />
      </Field>
      {SETTINGS.filter(([key]) => sim.solver === 'bdf' || !BDF_ONLY.includes(key)).map(([key, hint, fallback]) => (
        <CommitField
          key={key}
          label={`simulation ${key}`}
          value={text(sim[key])}
          placeholder={`default ${fallback}`}
          hint={hint}
          read={readPositive}
          onCommit={(v) => onSimulation(key, v)}
        />
      ))}
    </div>
  );
}

/** Several blocks selected: how many, and their alignment. */
function SelectionPanel({ count, onAlign }) {
  return (
    <div className="form" data-testid="selection-form">
      <Heading size="3">{count} blocks selected</Heading>
      <Text size="1" color="gray" as="p" mt="1">
        Ctrl+C copies them with the links between them; R turns, F mirrors, Delete removes them.
      </Text>
      <Separator size="4" my="2" />
      <Text size="1" weight="medium" color="gray">
        Align
      </Text>
      <Flex gap="1" mt="1" wrap="wrap">
        {ALIGNMENTS.map(([how, label, Icon]) => (
          <Tooltip key={how} content={label}>
            <IconButton size="2" variant="soft" color="gray" aria-label={`align ${how}`} onClick={() => onAlign(how)}>
              <Icon />
            </IconButton>
          </Tooltip>
        ))}
      </Flex>
    </div>
  );
}

/** The side panel for what is selected. */
export function SidePanel({ doc, blocks, library, update, onRename, onAlign }) {
  let body;
  if (blocks.length === 1) {
    const block = blocks[0];
    const edit = (change) =>
      update((d) => {
        const b = d.blocks.find((x) => x.id === block.id);
        if (b) change(b);
      });
    body = (
      <BlockForm
        block={block}
        entry={library.find((b) => b.type === block.type)}
        onRename={(to) => onRename(block.id, to)}
        onParam={(name, value) =>
          edit((b) => {
            b.params = { ...(b.params || {}) };
            if (value === undefined) delete b.params[name];
            else b.params[name] = value;
            if (Object.keys(b.params).length === 0) delete b.params;
          })
        }
        onSampleTime={(value) =>
          edit((b) => {
            if (value === undefined) delete b.sample_time;
            else b.sample_time = value;
          })
        }
      />
    );
  } else if (blocks.length > 1) {
    body = <SelectionPanel count={blocks.length} onAlign={onAlign} />;
  } else {
    body = (
      <ModelForm
        doc={doc}
        onSet={(key, value) =>
          update((_, root) => setMember(root, key, value))
        }
        onSimulation={(key, value) =>
          update((_, root) => {
            const sim = { ...(root.simulation || {}) };
            if (value === undefined) delete sim[key];
            else sim[key] = value;
            setMember(root, 'simulation', Object.keys(sim).length ? sim : undefined);
          })
        }
      />
    );
  }
  return (
    <aside className="side" aria-label="properties">
      <Box p="3">{body}</Box>
    </aside>
  );
}
