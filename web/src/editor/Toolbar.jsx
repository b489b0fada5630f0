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

function Tool({ label, keys, onClick, disabled, children, className }) {
  return (
    <Tooltip content={keys ? `${label} (${keys})` : label}>
      <IconButton size="2" variant="ghost" color="gray" aria-label={label} onClick={onClick} disabled={disabled} className={className}>
        {children}
      </IconButton>
    </Tooltip>
  );
}

/** The toolbar; `act` holds the actions, `can` what is possible now. */
export function Toolbar({ act, can, crumbs, onCrumb }) {
  return (
    <Flex className="editor-toolbar" align="center" gap="3" px="3" role="toolbar" aria-label="editor tools">
      <Flex gap="3" align="center">
        <Tool label="Undo" keys="Ctrl+Z" onClick={act.undo} disabled={!can.undo}>
          <ResetIcon />
        </Tool>
        <Tool label="Redo" keys="Ctrl+Shift+Z" onClick={act.redo} disabled={!can.redo} className="mirrored">
          <ResetIcon />
        </Tool>
      </Flex>
      <Separator orientation="vertical" />
      <Flex gap="3" align="center">
        <Tool label="Lay out" keys="L" onClick={act.layOut} disabled={!can.layOut}>
          <LayoutIcon />
        </Tool>
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
        <Tool label="Rotate" keys="R" onClick={act.rotate} disabled={!can.turn} className="mirrored">
          <RotateCounterClockwiseIcon />
        </Tool>
        <Tool label="Flip" keys="F" onClick={act.flip} disabled={!can.turn}>
          <ColumnSpacingIcon />
        </Tool>
      </Flex>
      <Separator orientation="vertical" />
      <Flex gap="3" align="center">
        <Tool label="Copy" keys="Ctrl+C" onClick={act.copy} disabled={!can.turn}>
          <CopyIcon />
        </Tool>
        <Tool label="Paste" keys="Ctrl+V" onClick={act.paste}>
          <ClipboardIcon />
        </Tool>
        <Tool label="Delete" keys="Delete" onClick={act.remove} disabled={!can.remove}>
          <TrashIcon />
        </Tool>
      </Flex>
      <Separator orientation="vertical" />
      <Tool label="Fit the view" onClick={act.fit}>
        <EnterFullScreenIcon />
      </Tool>
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
    </Flex>
  );
}
