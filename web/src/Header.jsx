// The page's header: the views, the model's file (open from the server's
// folder or this computer, save with a question before overwriting,
// new, download), light or dark, and the help panel of shortcuts.
import { useEffect, useState } from 'react';
import { Badge, Button, Dialog, Flex, IconButton, Popover, Table, Tabs, Text, TextField, Tooltip } from '@radix-ui/themes';
import { ArchiveIcon, DownloadIcon, MoonIcon, QuestionMarkCircledIcon, SunIcon, UploadIcon } from '@radix-ui/react-icons';
import { api } from './api.js';
import { useConfirm } from './confirm.jsx';
import { unreadable } from './editor/errors.js';
import { detectStyle, parseModel, serialize } from './format.js';
import { download } from './plot.js';
import { SHORTCUTS } from './shortcuts.js';
import { TableRoot } from './TableRoot.jsx';
import { EMPTY_DOC, modelStore, opened, useStore } from './store.js';

/** The open list's values that browse instead of opening: up a folder, and into one (its name after). */
const UP = 'folder:..';
const FOLDER = 'folder:';

/** The folder part and the name part of `path`. */
function split(path) {
  const at = path.lastIndexOf('/');
  return at < 0 ? ['', path] : [path.slice(0, at), path.slice(at + 1)];
}

function Files({ unsaved }) {
  const model = useStore(modelStore);
  const setModel = modelStore.set;
  const ask = useConfirm();
  const [dir, setDir] = useState('models/examples');
  const [entries, setEntries] = useState([]);
  const [path, setPath] = useState(model.file);
  const [message, setMessage] = useState('');
  useEffect(() => setPath(model.file), [model.file]);
  useEffect(() => {
    // Replies to a folder typed since are dropped: the list is this folder's.
    let current = true;
    api('GET', `/api/files?dir=${encodeURIComponent(dir)}`).then((r) => current && setEntries(r.ok ? r.json.entries : []));
    return () => {
      current = false;
    };
  }, [dir]);

  const mayDiscard = async () =>
    !unsaved ||
    ask({
      title: 'Discard unsaved changes?',
      description: `${model.file || model.doc.name || 'This model'} has changes that are not saved.`,
      action: 'Discard changes',
    });
  const replace = (doc, style, file) => setModel((m) => opened(doc, style, file, m.generation + 1));

  // The list opens a model, or browses: into a folder listed, or up one.
  const choose = (value) => {
    if (value === UP) setDir(split(dir)[0] || '.');
    else if (value.startsWith(FOLDER)) setDir(dir === '.' ? value.slice(FOLDER.length) : `${dir}/${value.slice(FOLDER.length)}`);
    else if (value) open(dir === '.' ? value : `${dir}/${value}`);
  };
  const open = async (file) => {
    if (!(await mayDiscard())) return;
    const r = await api('GET', `/api/files/${file}`);
    if (!r.ok) return setMessage(r.json?.error ?? r.text);
    try {
      replace(parseModel(r.text), detectStyle(r.text), file);
      setMessage(`opened ${file}`);
    } catch (e) {
      setMessage(`${file}: ${unreadable(r.text, e)}`);
    }
  };
  const save = async () => {
    if (path !== model.file) {
      const [folder, name] = split(path);
      const listed = await api('GET', `/api/files?dir=${encodeURIComponent(folder || '.')}`);
      const exists = listed.ok && listed.json.entries.some((e) => e.kind === 'file' && e.name === name);
      if (
        exists &&
        !(await ask({ title: `Overwrite ${path}?`, description: `${path} exists; saving replaces its contents.`, action: 'Overwrite' }))
      )
        return;
    }
    const text = serialize(model.doc, model.style);
    const r = await api('PUT', `/api/files/${path}`, text);
    setMessage(r.ok ? `saved ${path}` : r.json?.error ?? r.text);
    if (r.ok) setModel((m) => ({ ...m, file: path, saved: text }));
  };
  const newModel = async () => {
    if (await mayDiscard()) replace(EMPTY_DOC, 'pretty', '');
  };
  const openLocal = async (e) => {
    const file = e.target.files[0];
    e.target.value = '';
    if (!file || !(await mayDiscard())) return;
    const text = await file.text();
    try {
      // Not a file of the server's folder: Save asks for a path first.
      replace(parseModel(text), detectStyle(text), '');
      setMessage(`opened ${file.name} from this computer`);
    } catch (err) {
      setMessage(`${file.name}: ${unreadable(text, err)}`);
    }
  };
  useEffect(() => {
    const key = (e) => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 's') {
        e.preventDefault();
        if (path) save();
      }
    };
    window.addEventListener('keydown', key);
    return () => window.removeEventListener('keydown', key);
  });

  return (
    <Flex className="files" gap="2" align="center" wrap="nowrap">
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
