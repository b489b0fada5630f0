// The editor's toolbar: history, layout, alignment, turning, clipboard,
// deleting and fitting the view, as icon buttons with tooltips; and the
// path of the subsystem shown.
import { Button, Flex, IconButton, Popover, Separator, Text, Tooltip } from '@radix-ui/themes';
import {
  AlignBottomIcon,
  AlignCenterHorizontallyIcon,
  AlignCenterVerticallyIcon,
  AlignLeftIcon,
  AlignRightIcon,
  AlignTopIcon,
  ChevronDownIcon,
  ChevronRightIcon,
  ClipboardIcon,
  ColumnSpacingIcon,
  CopyIcon,
  EnterFullScreenIcon,
  LayoutIcon,
  ResetIcon,
  RotateCounterClockwiseIcon,
  TrashIcon,
} from '@radix-ui/react-icons';

/** The alignments: key, label, icon. */
export const ALIGNMENTS = [
  ['left', 'Align left edges', AlignLeftIcon],
  ['centre', 'Align centres (vertical line)', AlignCenterHorizontallyIcon],
  ['right', 'Align right edges', AlignRightIcon],
  ['top', 'Align top edges', AlignTopIcon],
  ['middle', 'Align middles (horizontal line)', AlignCenterVerticallyIcon],
  ['bottom', 'Align bottom edges', AlignBottomIcon],
];

/**
 * The tool buttons of a group: label, shortcut, action (in `act`), what
 * makes it possible (in `can`; none: always), icon, and a class (a
 * mirrored icon).
 */
const HISTORY = [
  ['Undo', 'Ctrl+Z', 'undo', 'undo', ResetIcon],
  ['Redo', 'Ctrl+Shift+Z', 'redo', 'redo', ResetIcon, 'mirrored'],
];
const TURNS = [
  ['Rotate', 'R', 'rotate', 'turn', RotateCounterClockwiseIcon, 'mirrored'],
  ['Flip', 'F', 'flip', 'turn', ColumnSpacingIcon],
];
const CLIPBOARD = [
  ['Copy', 'Ctrl+C', 'copy', 'turn', CopyIcon],
  ['Paste', 'Ctrl+V', 'paste', null, ClipboardIcon],
  ['Delete', 'Delete', 'remove', 'remove', TrashIcon],
];

function Tool({ label, keys, onClick, disabled, children, className }) {
  return (
    <Tooltip content={keys ? `${label} (${keys})` : label}>
      <IconButton size="2" variant="ghost" color="gray" aria-label={label} onClick={onClick} disabled={disabled} className={className}>
        {children}
      </IconButton>
    </Tooltip>
  );
}

/** The buttons of `tools` (HISTORY, TURNS, CLIPBOARD). */
function Tools({ tools, act, can }) {
  return tools.map(([label, keys, action, when, Icon, className]) => (
    <Tool key={label} label={label} keys={keys} onClick={act[action]} disabled={when ? !can[when] : undefined} className={className}>
      <Icon />
    </Tool>
  ));
}

/** The alignments of the selected blocks, in a menu. */
function AlignMenu({ act, can }) {
  return (
    <Popover.Root>
      <Tooltip content="Align the selected blocks">
        <Popover.Trigger disabled={!can.align}>
          <Button size="2" variant="ghost" color="gray" aria-label="Align" disabled={!can.align}>
            <AlignLeftIcon />
            <ChevronDownIcon />
          </Button>
        </Popover.Trigger>
      </Tooltip>
      <Popover.Content size="1" className="align-menu" aria-label="align">
        <Text as="div" size="1" color="gray" mb="1">
          Align the selected blocks
        </Text>
        {ALIGNMENTS.map(([how, label, Icon]) => (
          <Popover.Close key={how}>
            <Button size="1" variant="ghost" color="gray" className="align-item" onClick={() => act.align(how)}>
              <Icon /> {label}
            </Button>
          </Popover.Close>
        ))}
      </Popover.Content>
    </Popover.Root>
  );
}

/** The path of the subsystem shown, each step a button back to it. */
function Crumbs({ crumbs, onCrumb }) {
  return (
    <Flex className="crumbs" align="center" gap="1" ml="auto" aria-label="subsystem path">
      {crumbs.map((name, i) => (
        <Flex key={i} align="center" gap="1">
          {i > 0 && <ChevronRightIcon color="var(--gray-9)" />}
          <Button size="1" variant={i === crumbs.length - 1 ? 'soft' : 'ghost'} color="gray" onClick={() => onCrumb(i)}>
            {name}
          </Button>
        </Flex>
      ))}
    </Flex>
  );
}

/** The toolbar; `act` holds the actions, `can` what is possible now. */
export function Toolbar({ act, can, crumbs, onCrumb }) {
  return (
    <Flex className="editor-toolbar" align="center" gap="3" px="3" role="toolbar" aria-label="editor tools">
      <Flex gap="3" align="center">
        <Tools tools={HISTORY} act={act} can={can} />
      </Flex>
      <Separator orientation="vertical" />
      <Flex gap="3" align="center">
        <Tool label="Lay out" keys="L" onClick={act.layOut} disabled={!can.layOut}>
          <LayoutIcon />
        </Tool>
        <AlignMenu act={act} can={can} />
        <Tools tools={TURNS} act={act} can={can} />
      </Flex>
      <Separator orientation="vertical" />
      <Flex gap="3" align="center">
        <Tools tools={CLIPBOARD} act={act} can={can} />
      </Flex>
      <Separator orientation="vertical" />
      <Tool label="Fit the view" onClick={act.fit}>
        <EnterFullScreenIcon />
      </Tool>
      <Crumbs crumbs={crumbs} onCrumb={onCrumb} />
    </Flex>
  );
}
