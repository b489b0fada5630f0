// The page's header: the views, the model's file (open from the server's
// folder or this computer, save with a question before overwriting,
// new, download), light or dark, and the help panel of shortcuts.
import { Badge, Button, Dialog, Flex, IconButton, Popover, Table, Tabs, Text, TextField, Tooltip } from '@radix-ui/themes';
import { ArchiveIcon, DownloadIcon, MoonIcon, QuestionMarkCircledIcon, SunIcon, UploadIcon } from '@radix-ui/react-icons';
import { serialize } from './format.js';
import { download } from './plot.js';
import { SHORTCUTS } from './shortcuts.js';
import { TableRoot } from './TableRoot.jsx';
import { FOLDER, UP, useFiles } from './header/useFiles.js';

/** The folder the open list shows, typed in a popover. */
function FolderButton({ dir, setDir }) {
  return (
    <Popover.Root>
      <Tooltip content={`Folder: ${dir}`}>
        <Popover.Trigger>
          <IconButton size="1" variant="soft" aria-label="folder to list">
            <ArchiveIcon />
          </IconButton>
        </Popover.Trigger>
      </Tooltip>
      <Popover.Content size="1" width="280px">
        <TextField.Root size="1" aria-label="folder" value={dir} onChange={(e) => setDir(e.target.value)}>
          <TextField.Slot>folder</TextField.Slot>
        </TextField.Root>
      </Popover.Content>
    </Popover.Root>
  );
}

/** The models and folders of `dir` (`entries`), to open or browse into. */
function OpenList({ dir, entries, choose }) {
  return (
    <select className="native-select open-select" aria-label="open model" value="" onChange={(e) => choose(e.target.value)}>
      <option value="">Open…</option>
      <optgroup label={`in ${dir}/`}>
        {dir !== '.' && <option value={UP}>↑ up a folder</option>}
        {entries
          .filter((e) => e.kind === 'dir')
          .map((e) => (
            <option key={`dir ${e.name}`} value={`${FOLDER}${e.name}`}>
              {e.name}/
            </option>
          ))}
        {entries
          .filter((e) => e.kind === 'file' && e.name.endsWith('.json'))
          .map((e) => (
            <option key={e.name}>{e.name}</option>
          ))}
      </optgroup>
    </select>
  );
}

/** The model's file: open, save as, new, open from and download to this computer. */
function Files({ unsaved }) {
  const { model, dir, setDir, entries, path, setPath, message, choose, save, newModel, openLocal } = useFiles(unsaved);
  return (
    <Flex className="files" gap="2" align="center" wrap="nowrap">
      <FolderButton dir={dir} setDir={setDir} />
      <OpenList dir={dir} entries={entries} choose={choose} />
      <TextField.Root
        size="1"
        aria-label="save as"
        value={path}
        onChange={(e) => setPath(e.target.value)}
        placeholder="models/new.json"
        className="path-field"
      />
      <Button size="1" onClick={save} disabled={!path}>
        Save
      </Button>
      <Button size="1" variant="soft" onClick={newModel}>
        New
      </Button>
      <Tooltip content="Open a model file from this computer">
        <IconButton size="1" variant="soft" asChild>
          <label aria-label="Open file…">
            <UploadIcon />
            <input type="file" accept=".json" aria-label="open a model file from this computer" onChange={openLocal} hidden />
          </label>
        </IconButton>
      </Tooltip>
      <Tooltip content="Download the model">
        <IconButton
          size="1"
          variant="soft"
          aria-label="Download"
          onClick={() => download(new Blob([serialize(model.doc, model.style)]), model.file.split('/').pop() || 'model.json')}
        >
          <DownloadIcon />
        </IconButton>
      </Tooltip>
      {unsaved && (
        <Badge color="amber" data-testid="unsaved">
          unsaved
        </Badge>
      )}
      <Text size="1" color="gray" className="message" role="status">
        {message}
      </Text>
    </Flex>
  );
}

function Help({ open, setOpen }) {
  return (
    <Dialog.Root open={open} onOpenChange={setOpen}>
      <Dialog.Content maxWidth="640px" aria-describedby={undefined}>
        <Dialog.Title>Keyboard shortcuts</Dialog.Title>
        <TableRoot>
          <Table.Body>
            {SHORTCUTS.map((s) => (
              <Table.Row key={`${s.group}${s.keys}`}>
                <Table.Cell>
                  <Text color="gray">{s.group}</Text>
                </Table.Cell>
                <Table.RowHeaderCell>
                  <kbd>{s.keys}</kbd>
                </Table.RowHeaderCell>
                <Table.Cell>{s.action}</Table.Cell>
              </Table.Row>
            ))}
          </Table.Body>
        </TableRoot>
        <Flex justify="end" mt="3">
          <Dialog.Close>
            <Button variant="soft">Close</Button>
          </Dialog.Close>
        </Flex>
      </Dialog.Content>
    </Dialog.Root>
  );
}

/** The header: views, the model's file, appearance and help. */
export function Header({ view, setView, unsaved, appearance, toggleAppearance, help, setHelp }) {
  return (
    <header className="header">
      <Text weight="bold" size="4" className="brand">
        Tandem
      </Text>
      <Tabs.Root value={view} onValueChange={setView}>
        <Tabs.List size="2">
          <Tabs.Trigger value="editor">Editor</Tabs.Trigger>
          <Tabs.Trigger value="run">Run</Tabs.Trigger>
          <Tabs.Trigger value="dashboard">Dashboard</Tabs.Trigger>
        </Tabs.List>
      </Tabs.Root>
      <div className="header-files" hidden={view === 'dashboard'}>
        <Files unsaved={unsaved} />
      </div>
      <Flex gap="1" className="header-tools">
        <Tooltip content={appearance === 'dark' ? 'Light theme' : 'Dark theme'}>
          <IconButton size="1" variant="ghost" aria-label={appearance === 'dark' ? 'light theme' : 'dark theme'} onClick={toggleAppearance}>
            {appearance === 'dark' ? <SunIcon /> : <MoonIcon />}
          </IconButton>
        </Tooltip>
        <Tooltip content="Keyboard shortcuts (?)">
          <IconButton size="1" variant="ghost" aria-label="keyboard shortcuts" onClick={() => setHelp(true)}>
            <QuestionMarkCircledIcon />
          </IconButton>
        </Tooltip>
      </Flex>
      <Help open={help} setOpen={setHelp} />
    </header>
  );
}
