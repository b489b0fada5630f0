// The Run view's inputs and probes (offline.js): a value for each input
// of the model (from the start, or from a time on), and the internal
// signals recorded beside its outputs. For the runs only: the model file
// is not changed.
import { useState } from 'react';
import { Button, Flex, Heading, IconButton, Text, TextField } from '@radix-ui/themes';
import { Cross2Icon, PlusIcon } from '@radix-ui/react-icons';
import { inputsOf } from './offline.js';

/**
 * `inputs` by id (`{value, at}` as typed) and `probes` (`block` or
 * `block.port`), with their setters, for the model `doc`.
 */
export function RunInputs({ doc, inputs, setInputs, probes, setProbes }) {
  const [probe, setProbe] = useState('');
  const list = inputsOf(doc);
  const blocks = (doc.blocks ?? []).filter((b) => !['Output', 'Outport'].includes(b.type)).map((b) => b.id);
  const set = (id, key, text) => setInputs({ ...inputs, [id]: { value: '', at: '', ...inputs[id], [key]: text } });
  const add = () => {
    const p = probe.trim();
    if (p && !probes.includes(p)) setProbes([...probes, p]);
    setProbe('');
  };
  return (
    <div className="run-inputs" data-testid="run-inputs">
      <Heading size="2" mb="1">
        Inputs
      </Heading>
      {list.length === 0 ? (
        <Text as="p" size="1" color="gray" mb="2">
          The model has no Inport at its top level.
        </Text>
      ) : (
        <div className="run-input-rows">
          {list.map((i) => (
            <div key={i.id} className="run-input-row">
              <Text size="2" className="run-input-name" truncate title={i.id}>
                {i.id}
              </Text>
              <TextField.Root size="1" aria-label={`input ${i.id}`} placeholder={`${i.default}`} value={inputs[i.id]?.value ?? ''} onChange={(e) => set(i.id, 'value', e.target.value)}>
                {i.unit && <TextField.Slot side="right">{i.unit}</TextField.Slot>}
              </TextField.Root>
              <TextField.Root size="1" aria-label={`input ${i.id} from`} placeholder="from 0" value={inputs[i.id]?.at ?? ''} onChange={(e) => set(i.id, 'at', e.target.value)}>
                <TextField.Slot side="right">s</TextField.Slot>
              </TextField.Root>
            </div>
          ))}
          <Text as="p" size="1" color="gray">
            Empty: the Inport’s default. With a time: the default until then.
          </Text>
        </div>
      )}
      <Heading size="2" mt="3" mb="1">
        Probes
      </Heading>
      <Flex gap="2" align="center">
        <TextField.Root
          size="1"
          aria-label="probe signal"
          placeholder="block or block.port"
          list="run-probe-blocks"
          value={probe}
          onChange={(e) => setProbe(e.target.value)}
          onKeyDown={(e) => e.key === 'Enter' && add()}
          className="run-probe-field"
        />
        <datalist id="run-probe-blocks">
          {blocks.map((b) => (
            <option key={b} value={b} />
          ))}
        </datalist>
        <Button size="1" variant="soft" onClick={add} disabled={probe.trim() === ''}>
          <PlusIcon /> Probe
        </Button>
      </Flex>
      {probes.length > 0 && (
        <ul className="run-probes" aria-label="probes">
          {probes.map((p) => (
            <li key={p}>
              <Text size="2">{p}</Text>
              <IconButton size="1" variant="ghost" color="gray" aria-label={`remove probe ${p}`} onClick={() => setProbes(probes.filter((x) => x !== p))}>
                <Cross2Icon />
              </IconButton>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
