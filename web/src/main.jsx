// The page: a model being edited (Editor), run offline (Run), and the
// real-time runs (Dashboard); the model is opened from and saved to the
// server's folder or this computer.
import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import '@xyflow/react/dist/style.css';
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { api } from './api.js';
import { Dashboard } from './Dashboard.jsx';
import { Editor } from './Editor.jsx';
import { detectStyle, parseModel, serialize } from './format.js';
import { download } from './plot.js';
import { Run } from './Run.jsx';

const EMPTY = { doc: { name: 'untitled', blocks: [], links: [] }, style: 'pretty', file: '' };

function Files({ model, setModel }) {
  const [dir, setDir] = useState('models/examples');
  const [entries, setEntries] = useState([]);
  const [path, setPath] = useState(model.file);
  const [message, setMessage] = useState('');
  useEffect(() => setPath(model.file), [model.file]);
  useEffect(() => {
    api('GET', `/api/files?dir=${encodeURIComponent(dir)}`).then((r) => setEntries(r.ok ? r.json.entries : []));
  }, [dir]);
  const open = async (file) => {
    const r = await api('GET', `/api/files/${file}`);
    if (!r.ok) return setMessage(r.json?.error ?? r.text);
    try {
      setModel({ doc: parseModel(r.text), style: detectStyle(r.text), file });
      setMessage(`opened ${file}`);
    } catch (e) {
      setMessage(`${file}: ${e.message}`);
    }
  };
  const save = async () => {
    const r = await api('PUT', `/api/files/${path}`, serialize(model.doc, model.style));
    setMessage(r.ok ? `saved ${path}` : r.json?.error ?? r.text);
    if (r.ok) setModel({ ...model, file: path });
  };
  const openLocal = async (e) => {
    const file = e.target.files[0];
    if (!file) return;
    const text = await file.text();
    setModel({ doc: parseModel(text), style: detectStyle(text), file: file.name });
  };
  return (
    <div className="files">
      <label>
        folder
        <input aria-label="folder" value={dir} onChange={(e) => setDir(e.target.value)} size={18} />
      </label>
      <select aria-label="open model" value="" onChange={(e) => e.target.value && open(`${dir}/${e.target.value}`)}>
        <option value="">open…</option>
        {entries
          .filter((e) => e.kind === 'file' && e.name.endsWith('.json'))
          .map((e) => (
            <option key={e.name}>{e.name}</option>
          ))}
      </select>
      <input aria-label="save as" value={path} onChange={(e) => setPath(e.target.value)} placeholder="models/new.json" size={26} />
      <button onClick={save} disabled={!path}>Save</button>
      <button onClick={() => setModel(EMPTY)}>New</button>
      <label className="button">
        Open file…
        <input type="file" accept=".json" onChange={openLocal} hidden />
      </label>
      <button onClick={() => download(new Blob([serialize(model.doc, model.style)]), model.file.split('/').pop() || 'model.json')}>
        Download
      </button>
      <span className="message">{message}</span>
    </div>
  );
}

function App() {
  const [view, setView] = useState('editor');
  const [model, setModel] = useState(EMPTY);
  const [library, setLibrary] = useState([]);
  useEffect(() => {
    api('GET', '/api/blocks').then((r) => r.ok && setLibrary(r.json.blocks));
  }, []);
  const tabs = { editor: 'Editor', run: 'Run', dashboard: 'Dashboard' };
  return (
    <div className="app">
      <header>
        <strong>Tandem</strong>
        <nav>
          {Object.entries(tabs).map(([k, label]) => (
            <button key={k} className={view === k ? 'chosen' : ''} onClick={() => setView(k)} role="tab" aria-selected={view === k}>
              {label}
            </button>
          ))}
        </nav>
        {view !== 'dashboard' && <Files model={model} setModel={setModel} />}
      </header>
      <main>
        {view === 'editor' && <Editor model={model} setModel={setModel} library={library} />}
        {view === 'run' && <Run model={model} />}
        {view === 'dashboard' && <Dashboard />}
      </main>
    </div>
  );
}

createRoot(document.getElementById('root')).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
