// The server's check errors as the user reads them: the block and port
// first, in words, without the `line:column:` of a text the editor writes
// itself, a fix's JSON link in words; a JSON syntax error as a plain
// sentence.

const SYNTAX = [
  [/EOF while parsing/i, 'the text ends before the model is complete'],
  [/trailing comma/i, 'there is a comma before a closing bracket or brace'],
  [/key must be a string/i, 'a member name is not in double quotes'],
  [/expected `,` or `\}`/i, 'a comma or a closing brace is missing'],
  [/expected `,` or `\]`/i, 'a comma or a closing bracket is missing'],
  [/expected `:`/i, 'a colon is missing after a member name'],
  [/expected value/i, 'a value is missing or is not JSON (strings need double quotes)'],
  [/control character/i, 'a string holds a line break or tab; write it as \\n or \\t'],
  [/invalid escape/i, 'a string holds a backslash that starts no escape'],
  [/trailing characters/i, 'there is more text after the end of the model'],
];

/** A JSON syntax error from the server (`N:M: invalid model JSON: …`) in words. */
export function plainSyntax(message) {
  const at = message.match(/line (\d+) column (\d+)/) || message.match(/^(\d+):(\d+):/);
  const found = SYNTAX.find(([re]) => re.test(message));
  const what = found ? found[1] : message.replace(/^\d+:\d+:\s*/, '').replace(/ at line \d+ column \d+/, '').split('\n')[0];
  const where = at ? ` (line ${at[1]}, column ${at[2]})` : '';
  return `The model is not valid JSON${where}: ${what}.`;
}

/**
 * A model file that does not parse (`error` from lossless-json, which
 * counts characters from 0) in words: where, as line and column of `text`,
 * and what was expected.
 */
export function unreadable(text, error) {
  const message = String(error?.message ?? error);
  const at = message.match(/ at position (\d+)$/);
  let where = '';
  if (at) {
    const before = text.slice(0, Number(at[1]));
    const line = before.split('\n').length;
    where = ` (line ${line}, column ${before.length - before.lastIndexOf('\n')})`;
  }
  const what = message.replace(/ at position \d+$/, '').replace(/^./, (c) => c.toLowerCase());
  return `The file is not valid JSON${where}: ${what}.`;
}

/** A fix's JSON link (`add a link {"from": "<block>.<port>", "to": "b.2"}`) in words. */
export function inWords(fix) {
  return fix.replace(/add a link \{"from": "<block>\.<port>", "to": "([^"]+)"\}/g, 'link an output to `$1`');
}

/** The server's check error `{error, kind, place}` as the status bar and the block show it. */
export function describeError(json) {
  const message = String(json?.error ?? 'the check failed');
  if (json?.kind === 'Syntax') return plainSyntax(message);
  const place = json?.place || {};
  let [first, ...rest] = message.split('\n');
  first = first.replace(/^\d+:\d+:\s*/, '');
  if (place.block) {
    const name = place.block.split('/').pop();
    first = first.replace(new RegExp(`^block "${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}":\\s*`), '');
    first = `block \`${place.block}\`${place.port ? `, port \`${place.port}\`` : ''}: ${first}`;
  } else if (place.key && !first.startsWith(`${place.key}:`)) {
    first = `\`${place.key}\`: ${first}`;
  }
  const help = rest.map((l) => inWords(l.trim().replace(/^help:\s*/, 'Fix: '))).filter(Boolean);
  return [first, ...help].join('\n');
}
