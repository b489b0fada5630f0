// The round trip of every example model: loaded and saved unchanged gives
// its bytes; with layouts added, then stripped, too.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { detectStyle, parseModel, serialize, withoutLayout } from './format.js';

const examples = join(dirname(fileURLToPath(import.meta.url)), '../../models/examples');
const files = readdirSync(examples).filter((f) => f.endsWith('.json'));

test('there are examples to read', () => assert.ok(files.length >= 4));

for (const file of files) {
  const text = readFileSync(join(examples, file), 'utf8');
  test(`${file}: saved unchanged, it is the same bytes`, () => {
    assert.equal(serialize(parseModel(text), detectStyle(text)), text);
  });
  test(`${file}: with layouts added, then stripped, the same bytes`, () => {
    const style = detectStyle(text);
    const doc = parseModel(text);
    doc.blocks.forEach((b, i) => (b.layout = { x: 100 * i, y: 40 }));
    const saved = serialize(doc, style);
    assert.match(saved, /"layout"/);
    assert.equal(serialize(withoutLayout(parseModel(saved)), style), text);
  });
}

test('number literals survive', () => {
  assert.equal(serialize(parseModel('{"a": 15.0, "b": 1e-3}'), 'compact'), '{\n  "a": 15.0,\n  "b": 1e-3\n}\n');
});
