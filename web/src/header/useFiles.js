// The model's file: the folder listed, opening (from the server's folder
// or this computer), saving (asking before overwriting, Ctrl+S), New, and
// a message of what was done; unsaved changes are discarded only when
// the user says so.
import { useEffect, useState } from 'react';
import { api } from '../api.js';
import { useConfirm } from '../confirm.jsx';
import { unreadable } from '../editor/errors.js';
import { detectStyle, parseModel, serialize } from '../format.js';
import { EMPTY_DOC, modelStore, opened, useStore } from '../store.js';

/** The open list's values that browse instead of opening: up a folder, and into one (its name after). */
export const UP = 'folder:..';
export const FOLDER = 'folder:';

/** The folder part and the name part of `path`. */
function split(path) {
  const at = path.lastIndexOf('/');
  return at < 0 ? ['', path] : [path.slice(0, at), path.slice(at + 1)];
}

/** The file of the model being edited (store.js), which has `unsaved` changes. */
export function useFiles(unsaved) {
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

  return { model, dir, setDir, entries, path, setPath, message, choose, save, newModel, openLocal };
}
