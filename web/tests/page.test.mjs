// The page as a whole, in a real browser: every view at 1400×900 and
// 1024×768, light and dark, kept as screenshots and checked for overflow
// (nothing past the window's width that is not scrolled or clipped by a
// box inside it, the header on one line); the theme toggle; the help
// panel; the questions before discarding unsaved changes and before
// overwriting a file, each checked against the files on disk.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { browser, root, serve, shot } from './support.mjs';

const folder = mkdtempSync(join(tmpdir(), 'tandem-page-'));
mkdirSync(join(folder, 'models/examples'), { recursive: true });
for (const name of ['bouncing_ball.json', 'cruise_control.json']) {
  copyFileSync(join(root, 'models/examples', name), join(folder, 'models/examples', name));
}
writeFileSync(join(folder, 'models/examples/broken.json'), '{\n  "name": "broken",\n  "blocks": [,]\n}\n');
const shared = {};
before(async () => {
  shared.server = await serve(folder);
});
after(() => {
  shared.server?.stop();
  rmSync(folder, { recursive: true, force: true });
});

/**
 * What in the page reaches past the window's width, and is not in a box
 * inside the window that scrolls or pans to it.
 */
function overflowing() {
  const width = window.innerWidth;
  const inside = (r) => r.left >= -0.5 && r.right <= width + 0.5;
  const found = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || inside(r)) continue;
    let clipped = false;
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      // A box that scrolls, or a canvas that pans, shows the rest on demand;
      // content cut off by a hidden overflow elsewhere is lost to the user.
      const pans = a.classList.contains('react-flow') || a.classList.contains('uplot');
      if ((pans || ['auto', 'scroll'].includes(getComputedStyle(a).overflowX)) && inside(a.getBoundingClientRect())) {
        clipped = true;
        break;
      }
    }
    if (!clipped) found.push(`${el.tagName.toLowerCase()}.${el.className} ${Math.round(r.left)}–${Math.round(r.right)}`);
  }
  if (document.documentElement.scrollWidth > width) found.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} > ${width}`);
  return found;
}

/** The controls in the page (every view's) without an accessible name. */
function unlabelled() {
  const controls = 'button, input, select, textarea, [role="button"], [role="tab"], [role="checkbox"], [role="switch"], [role="slider"], [role="combobox"], [role="menuitem"]';
  const named = (el) => {
    const by = el.getAttribute('aria-labelledby');
    return (
      el.getAttribute('aria-label') ||
      (by && by.split(' ').map((id) => document.getElementById(id)?.textContent ?? '').join(' ').trim()) ||
      (el.labels && [...el.labels].map((l) => l.textContent).join(' ').trim()) ||
      (el.tagName !== 'INPUT' && el.tagName !== 'SELECT' && el.textContent.trim()) ||
      el.getAttribute('title')
    );
  };
  return [...document.querySelectorAll(controls)]
    .filter((el) => !el.hidden && el.type !== 'hidden' && !named(el))
    .map((el) => el.outerHTML.slice(0, 160));
}

/** The header's children that do not sit on its first line, and its height. */
function headerLines() {
  const header = document.querySelector('header');
  const kids = [...header.children].filter((k) => k.getBoundingClientRect().height > 0);
  const top = Math.min(...kids.map((k) => k.getBoundingClientRect().top));
  const bottom = Math.min(...kids.map((k) => k.getBoundingClientRect().bottom));
  return {
    height: header.getBoundingClientRect().height,
    below: kids.filter((k) => k.getBoundingClientRect().top >= bottom).map((k) => k.className),
    top,
  };
}

for (const [width, height] of [
  [1400, 900],
  [1024, 768],
]) {
  test(`every view at ${width}×${height}, light and dark, stays inside the window with its header on one line`, async () => {
    const { browser: b, page, violations } = await browser(width, height);
    try {
      await page.goto(shared.server.url);
      await page.getByLabel('open model').selectOption('bouncing_ball.json');
      await page.getByTestId('block-velocity').waitFor();
      for (const appearance of ['light', 'dark']) {
        if (appearance === 'dark') await page.getByRole('button', { name: 'dark theme' }).click();
        for (const view of ['Editor', 'Run', 'Dashboard']) {
          await page.getByRole('tab', { name: view }).click();
          await page.waitForTimeout(300);
          await shot(page, `page-${view.toLowerCase()}-${width}x${height}-${appearance}`);
          assert.deepEqual(await page.evaluate(overflowing), [], `${view} at ${width}×${height}, ${appearance}`);
          const header = await page.evaluate(headerLines);
          assert.deepEqual(header.below, [], `${view}: the header wrapped`);
          assert.ok(header.height < 56, `${view}: the header is ${header.height} px high`);
        }
      }
      // Dark means a dark background, and the choice is kept for the next visit.
      const background = await page.evaluate(() => getComputedStyle(document.querySelector('.app')).backgroundColor);
      const [r, g, bl] = background.match(/\d+/g).map(Number);
      assert.ok(r + g + bl < 3 * 60, `a dark background, not ${background}`);
      await page.reload();
      await page.getByRole('button', { name: 'light theme' }).waitFor();
      assert.deepEqual(violations, [], 'the content security policy blocked part of the page');
    } finally {
      await b.close();
    }
  });
}

test('every control of every view has an accessible name', async () => {
  const { browser: b, page } = await browser();
  try {
    await page.goto(shared.server.url);
    await page.getByLabel('open model').selectOption('bouncing_ball.json');
    await page.getByTestId('block-velocity').click();
    for (const view of ['Run', 'Dashboard', 'Editor']) {
      await page.getByRole('tab', { name: view }).click();
      await page.waitForTimeout(200);
      assert.deepEqual(await page.evaluate(unlabelled), [], view);
    }
  } finally {
    await b.close();
  }
});

test('? opens the help panel listing the shortcuts, and Escape closes it', async () => {
  const { browser: b, page, violations } = await browser();
  try {
    await page.goto(shared.server.url);
    await page.getByTestId('palette-Gain').waitFor();
    await page.locator('body').click({ position: { x: 5, y: 300 } });
    await page.keyboard.press('?');
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await help.waitFor();
    for (const keys of ['Ctrl+S', 'Ctrl+Z / Ctrl+Shift+Z (Ctrl+Y)', 'Ctrl+C / Ctrl+V', 'Ctrl+Enter']) {
      await help.getByText(keys, { exact: true }).waitFor();
    }
    await page.keyboard.press('Escape');
    await help.waitFor({ state: 'hidden' });
    // Alt+2 shows the Run view, Alt+1 the editor again.
    await page.keyboard.press('Alt+2');
    assert.equal(await page.getByRole('tab', { name: 'Run' }).getAttribute('aria-selected'), 'true');
    await page.keyboard.press('Alt+1');
    assert.equal(await page.getByRole('tab', { name: 'Editor' }).getAttribute('aria-selected'), 'true');
    assert.deepEqual(violations, [], 'the content security policy blocked part of the page');
  } finally {
    await b.close();
  }
});

test('saving over another file asks first; Cancel leaves it as it was, Overwrite replaces it', async () => {
  const { browser: b, page, violations } = await browser();
  const target = join(folder, 'models/examples/cruise_control.json');
  const before = readFileSync(target, 'utf8');
  try {
    await page.goto(shared.server.url);
    await page.getByLabel('open model').selectOption('bouncing_ball.json');
    await page.getByTestId('block-velocity').waitFor();
    await page.getByLabel('save as').fill('models/examples/cruise_control.json');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const question = page.getByRole('alertdialog', { name: 'Overwrite models/examples/cruise_control.json?' });
    await question.waitFor();
    await question.getByRole('button', { name: 'Cancel' }).click();
    await question.waitFor({ state: 'hidden' });
    assert.equal(readFileSync(target, 'utf8'), before);

    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await question.getByRole('button', { name: 'Overwrite' }).click();
    await page.getByRole('status').filter({ hasText: 'saved models/examples/cruise_control.json' }).waitFor();
    assert.equal(readFileSync(target, 'utf8'), readFileSync(join(folder, 'models/examples/bouncing_ball.json'), 'utf8'));
    // Saving to the file it came from again asks nothing.
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForTimeout(300);
    assert.equal(await page.getByRole('alertdialog').count(), 0);
    assert.deepEqual(violations, [], 'the content security policy blocked part of the page');
  } finally {
    await b.close();
    copyFileSync(join(root, 'models/examples/cruise_control.json'), target);
  }
});

test('New and Open ask before discarding unsaved changes, and closing the tab is guarded', async () => {
  const { browser: b, page } = await browser();
  try {
    await page.goto(shared.server.url);
    await page.getByLabel('open model').selectOption('bouncing_ball.json');
    const block = page.getByTestId('block-gravity');
    await block.waitFor();
    assert.equal(await page.getByTestId('unsaved').count(), 0, 'nothing unsaved right after opening');
    await block.click();
    await page.keyboard.press('Delete');
    await block.waitFor({ state: 'detached' });
    await page.getByTestId('unsaved').waitFor();

    const question = page.getByRole('alertdialog', { name: 'Discard unsaved changes?' });
    await page.getByRole('button', { name: 'New', exact: true }).click();
    await question.getByRole('button', { name: 'Cancel' }).click();
    await page.getByTestId('block-velocity').waitFor();
    assert.equal(await page.getByTestId('block-gravity').count(), 0, 'the change is still there');

    await page.getByLabel('open model').selectOption('cruise_control.json');
    await question.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await page.getByLabel('save as').inputValue(), 'models/examples/bouncing_ball.json');

    // The browser's own question on leaving: a beforeunload that cancels.
    const guarded = await page.evaluate(() => {
      const e = new Event('beforeunload', { cancelable: true });
      window.dispatchEvent(e);
      return e.defaultPrevented;
    });
    assert.equal(guarded, true);

    await page.getByRole('button', { name: 'New', exact: true }).click();
    await question.getByRole('button', { name: 'Discard changes' }).click();
    await page.getByTestId('block-velocity').waitFor({ state: 'detached' });
    assert.equal(await page.getByTestId('unsaved').count(), 0);
    const left = await page.evaluate(() => {
      const e = new Event('beforeunload', { cancelable: true });
      window.dispatchEvent(e);
      return e.defaultPrevented;
    });
    assert.equal(left, false, 'nothing to guard once the changes are gone');
  } finally {
    await b.close();
  }
});

test('a model file that does not parse is named with the line and column of the fault, in words', async () => {
  const { browser: b, page } = await browser();
  try {
    await page.goto(shared.server.url);
    await page.getByLabel('open model').selectOption('broken.json');
    const status = page.getByRole('status').filter({ hasText: 'broken.json' });
    await status.waitFor();
    assert.equal(
      await status.textContent(),
      "models/examples/broken.json: The file is not valid JSON (line 3, column 14): array item expected but got ','.",
    );
  } finally {
    await b.close();
  }
});

test('switching views keeps the editor\'s undo history and the Run view\'s options', async () => {
  const { browser: b, page } = await browser();
  try {
    await page.goto(shared.server.url);
    await page.getByLabel('open model').selectOption('bouncing_ball.json');
    await page.getByTestId('block-gravity').click();
    await page.keyboard.press('r');
    await page.getByTestId('unsaved').waitFor();
    await page.getByRole('tab', { name: 'Run' }).click();
    await page.getByLabel('stop', { exact: true }).fill('7');
    await page.getByRole('tab', { name: 'Dashboard' }).click();
    await page.getByRole('tab', { name: 'Editor' }).click();
    await page.getByRole('button', { name: 'Undo' }).click();
    // Undone back to the file as opened: nothing unsaved.
    await page.getByTestId('unsaved').waitFor({ state: 'detached' });
    await page.getByRole('tab', { name: 'Run' }).click();
    assert.equal(await page.getByLabel('stop', { exact: true }).inputValue(), '7');
  } finally {
    await b.close();
  }
});

test('the Run view follows the model\'s settings edited in the editor; the dashboard refuses a duration that is not a number', async () => {
  const { browser: b, page } = await browser();
  try {
    await page.goto(shared.server.url);
    await page.getByLabel('open model').selectOption('bouncing_ball.json');
    await page.getByTestId('block-velocity').waitFor();
    const stop = page.getByLabel('simulation stop', { exact: true });
    await stop.fill('5');
    await stop.press('Enter');
    await page.getByRole('tab', { name: 'Run' }).click();
    assert.equal(await page.getByLabel('stop', { exact: true }).inputValue(), '5');

    await page.getByRole('tab', { name: 'Dashboard' }).click();
    await page.getByLabel('duration').fill('ten');
    await page.getByRole('button', { name: 'Start run' }).click();
    assert.match(await page.getByTestId('start-error').textContent(), /^duration: “ten” is not a number > 0/);
    // Nothing was started.
    assert.deepEqual((await (await fetch(`${shared.server.url}/api/runs`)).json()).runs, []);
  } finally {
    await b.close();
  }
});

test('the open list browses the folder: up a folder and into another, then a model opens', async () => {
  const { browser: b, page } = await browser(1400, 900);
  try {
    await page.goto(shared.server.url);
    const list = page.getByLabel('open model');
    await list.locator('option', { hasText: 'cruise_control.json' }).waitFor({ state: 'attached' });
    await list.selectOption({ label: '↑ up a folder' });
    await list.locator('option', { hasText: 'examples/' }).waitFor({ state: 'attached' });
    assert.equal(await list.locator('option', { hasText: 'cruise_control.json' }).count(), 0, 'models/ holds no model itself');
    await list.selectOption({ label: '↑ up a folder' });
    await list.locator('option', { hasText: 'models/' }).waitFor({ state: 'attached' });
    assert.equal(await list.locator('option', { hasText: 'up a folder' }).count(), 0, 'nothing above the served folder');
    await list.selectOption({ label: 'models/' });
    await list.locator('option', { hasText: 'examples/' }).waitFor({ state: 'attached' });
    await list.selectOption({ label: 'examples/' });
    await list.locator('option', { hasText: 'cruise_control.json' }).waitFor({ state: 'attached' });
    await list.selectOption('cruise_control.json');
    await page.getByTestId('block-vehicle').waitFor();
  } finally {
    await b.close();
  }
});
