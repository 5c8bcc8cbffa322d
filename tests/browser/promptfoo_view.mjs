// Read one eval as `promptfoo view` (0.123.1) shows it, in headless Chromium, and print what is on screen.
//
//   node tests/browser/promptfoo_view.mjs BASE_URL EVAL_ID ROWS [--screenshots DIR] [--cells N]
//
// Opens BASE_URL/eval/EVAL_ID, waits until ROWS result rows are shown, then reads
//   providers  per output column, its header: {label, metrics: {name: "100.00% (2.00/2.00)"}, text} — the named
//              scores' "metric pills" (data-testid metric-name-* / metric-value-*), and all the header says
//   cells      per result cell (row × output column): {row, column, metrics: {name: "1.00"}, title
//              ("Details: <provider label>"), metadata: {key: value as shown}, evaluation: [{Metric, Pass,
//              Score, Value, Reason}]}, read from the cell's details drawer (the "View output and test
//              details" button): its Metadata and Evaluation tabs. Metadata values the viewer cuts at 300
//              characters are clicked open first, so every value is whole.
//   metricsDialog  the "Custom Metrics" dialog (opened by the first header's "Show more"): {heads: [[header texts]
//              per header row], rows: [[cell texts]]}; null when the header has no "Show more"
//   blockedRequests  requests that left the viewer's origin (aborted: the page stays on loopback)
//   consoleErrors
//   opened     with --links ORIGIN: per `open_*` metadata link of the first cell (passhat view's links to the trial's
//              transcript, diff, tests output): {key: {url, text}}, clicked as a reader does, `text` the new tab's
//              body text; screenshots DIR/opened-<key>.png. And fileProbe: a file:// link to the first cell's
//              transcript put on the page and clicked: {tabOpened, refused} (refused: Chromium's console message
//              "Not allowed to load local resource", taken out of consoleErrors).
// --cells N reads the details of the first N rows only (each drawer costs a second or two); the header pills are
// read whatever N. Waits are on elements and text, never on time. With --screenshots DIR it saves DIR/table.png and, per cell,
// DIR/details-r<row>-c<column>.png (its Metadata tab), for a reader checking a failed assertion; on failure
// DIR/failure.png. On failure it prints {"error", "screenshot", "pageText"} and exits 1.
import path from "node:path";
import { collectConsoleErrors, guardNetwork, log, runScript, squash } from "./_chromium.mjs";

const argv = process.argv.slice(2);
const shotsAt = argv.indexOf("--screenshots");
const screenshots = shotsAt >= 0 ? argv.splice(shotsAt, 2)[1] : null;
const shoot = (page, name) => (screenshots ? page.screenshot({ path: path.join(screenshots, name) }) : null);
const cellsAt = argv.indexOf("--cells");
const cellRows = cellsAt >= 0 ? Number(argv.splice(cellsAt, 2)[1]) : Infinity;
const linksAt = argv.indexOf("--links");
const linksOrigin = linksAt >= 0 ? argv.splice(linksAt, 2)[1] : null;
const [base, evalId, rowsArg] = argv;
const expectedRows = Number(rowsArg);
if (!base || !evalId || !Number.isInteger(expectedRows) || expectedRows < 1) {
  process.stderr.write("usage: promptfoo_view.mjs BASE_URL EVAL_ID ROWS [--screenshots DIR] [--cells N]\n");
  process.exit(2);
}
if (expectedRows > 10) {
  process.stderr.write(`the viewer shows 10 rows a page and this script reads one page: ${expectedRows} rows asked\n`);
  process.exit(2);
}
const origin = new URL(base).origin;
const DETAILS = "View output and test details";
const CUT = 300; // the viewer shows metadata values longer than this as the first 297 characters + "..."

/** {name: value text} of the metric pills under `root` (a header cell or a result cell). */
function readPills(root) {
  return root.evaluate((element) => {
    const pills = {};
    for (const name of element.querySelectorAll('[data-testid^="metric-name-"]')) {
      const metric = name.getAttribute("data-testid").slice("metric-name-".length);
      const value = element.querySelector(`[data-testid="metric-value-${CSS.escape(metric)}"]`);
      pills[metric] = value ? value.innerText.replace(/\s+/g, " ").trim() : null;
    }
    return pills;
  });
}

/** Rows of a simple table as objects keyed by its header texts; a Pass column's icon becomes true/false. */
function readTable(table) {
  return table.evaluate((element) => {
    const text = (cell) => cell.innerText.replace(/\s+/g, " ").trim();
    const headers = [...element.querySelectorAll("thead th")].map(text);
    return [...element.querySelectorAll("tbody tr")].map((tr) => {
      const row = {};
      [...tr.children].forEach((cell, index) => {
        const header = headers[index] || `column${index}`;
        if (header === "Pass") {
          const icon = cell.querySelector("svg");
          const cls = icon ? icon.getAttribute("class") || "" : "";
          row[header] = /emerald|green/.test(cls) ? true : /red/.test(cls) ? false : null;
        } else {
          row[header] = text(cell);
        }
      });
      return row;
    });
  });
}

async function readMetadata(page, drawer) {
  await drawer.getByRole("tab", { name: "Metadata" }).click();
  const table = drawer.getByRole("table").filter({ has: page.getByRole("columnheader", { name: "Key", exact: true }) });
  await table.waitFor();
  const readRows = () =>
    table.evaluate((element) =>
      [...element.querySelectorAll("tbody tr")].map((tr) => [tr.children[0].innerText.trim(), tr.children[1].innerText.trim()]),
    );
  let rows = await readRows();
  const cut = rows.map(([, value], index) => (value.length === CUT && value.endsWith("...") ? index : -1)).filter((i) => i >= 0);
  for (const index of cut) {
    const cell = table.locator("tbody tr").nth(index).locator(":scope > td").nth(1);
    await cell.click(); // expands in place
    await page.waitForFunction(
      ({ element, cut }) => !(element.innerText.trim().length === cut && element.innerText.trim().endsWith("...")),
      { element: await cell.elementHandle(), cut: CUT },
    );
  }
  if (cut.length) rows = await readRows();
  return Object.fromEntries(rows);
}

async function readEvaluation(page, drawer) {
  await drawer.getByRole("tab", { name: "Evaluation" }).click();
  const table = drawer.getByRole("table").filter({ has: page.getByRole("columnheader", { name: "Score", exact: true }) });
  await table.waitFor();
  return readTable(table);
}

/** Click each `open_*` link of the drawer's Metadata tab; {key: {url, text}} of the tab each one opened. */
async function openLinks(page, context, drawer, metadata) {
  const opened = {};
  for (const key of Object.keys(metadata).filter((k) => k.startsWith("open_")).sort()) {
    const row = drawer.locator("tbody tr").filter({ has: page.locator("td:first-child", { hasText: new RegExp(`^${key}$`) }) });
    const link = row.getByRole("link");
    const [tab] = await Promise.all([context.waitForEvent("page"), link.click()]);
    await tab.waitForLoadState("load");
    opened[key] = { url: tab.url(), text: await tab.locator("body").innerText() };
    log(`${key}: opened ${tab.url()}`);
    await shoot(tab, `opened-${key}.png`);
    await tab.close();
  }
  return opened;
}

/** What a file:// link does on this http page: a link to `file` is added and clicked; Chromium refuses it with a
 * console message (waited for) and opens no tab. */
async function probeFileLink(page, context, file, consoleErrors) {
  const refusal = page.waitForEvent("console", { predicate: (m) => m.text().includes("Not allowed to load local resource") });
  let tabOpened = false;
  context.once("page", () => { tabOpened = true; });
  await page.evaluate((href) => {
    const a = Object.assign(document.createElement("a"), { href, target: "_blank", id: "passhat-file-probe", textContent: "file link" });
    document.body.prepend(a);
  }, `file://${file}`);
  await page.locator("#passhat-file-probe").click();
  const refused = (await refusal).text();
  for (let i = consoleErrors.length - 1; i >= 0; i--) if (consoleErrors[i].includes("Not allowed to load local resource")) consoleErrors.splice(i, 1);
  return { tabOpened, refused };
}

await runScript(
  async ({ context, page }) => {
    const blockedRequests = await guardNetwork(
      context,
      (url) =>
        url.startsWith(`${origin}/`) || url.startsWith("data:") || url.startsWith("blob:") ||
        (linksOrigin !== null && url.startsWith(`${linksOrigin}/`)),
      `not ${origin}`,
    );
    const consoleErrors = collectConsoleErrors(page);
    const url = `${origin}/eval/${encodeURIComponent(evalId)}`;
    log(`open ${url}`);
    await page.goto(url, { waitUntil: "domcontentloaded" });

    // The eval is loaded when its header carries the metric pills and the rows' details buttons are there.
    const outputHeaders = page.locator("thead th").filter({ has: page.getByTestId("custom-metrics") });
    await outputHeaders.first().waitFor();
    const bodyRows = page.locator("tbody tr").filter({ has: page.getByRole("button", { name: DETAILS }) });
    const rowsShown = ([label, rows]) =>
      [...document.querySelectorAll("tbody tr")].filter((tr) => tr.querySelector(`button[aria-label="${label}"]`)).length >= rows;
    await page.waitForFunction(rowsShown, [DETAILS, expectedRows]).catch(() => {});
    log("table shown");
    await shoot(page, "table.png");
    const shown = await bodyRows.count();
    if (shown !== expectedRows) throw new Error(`expected ${expectedRows} result rows on the page, found ${shown}`);

    const providers = [];
    for (let index = 0, count = await outputHeaders.count(); index < count; index++) {
      const header = outputHeaders.nth(index);
      const label = squash(await header.locator(".provider").first().innerText());
      providers.push({ label, metrics: await readPills(header.getByTestId("custom-metrics")), text: squash(await header.innerText()) });
    }

    // The "Custom Metrics" dialog ("Show more" under the first column's pills): per metric, per column, Pass (sum
    // / count, a percentage), Score (the sum) and Count, as promptfoo shows them.
    let metricsDialog = null;
    const showMore = outputHeaders.first().getByTestId("toggle-show-more");
    if (await showMore.count()) {
      await showMore.click();
      const dialog = page.getByRole("dialog").filter({ hasText: "Custom Metrics" });
      await dialog.waitFor();
      await dialog.locator("tbody tr").first().waitFor();
      await shoot(page, "metrics-dialog.png");
      metricsDialog = await dialog.evaluate((element) => {
        const text = (cell) => cell.innerText.replace(/\s+/g, " ").trim();
        const heads = [...element.querySelectorAll("thead tr")].map((tr) => [...tr.children].map(text));
        const rows = [...element.querySelectorAll("tbody tr")].map((tr) => [...tr.children].map(text));
        return { heads, rows };
      });
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "hidden" });
    }

    const cells = [];
    let opened = null;
    for (let row = 0; row < Math.min(expectedRows, cellRows); row++) {
      const outputCells = bodyRows.nth(row).locator(":scope > td").filter({ has: page.getByRole("button", { name: DETAILS }) });
      for (let column = 0, count = await outputCells.count(); column < count; column++) {
        const cell = outputCells.nth(column);
        const metrics = await readPills(cell);
        await cell.getByRole("button", { name: DETAILS }).click();
        const drawer = page.getByRole("dialog");
        await drawer.waitFor();
        log(`row ${row} column ${column}: details open`);
        const title = squash(await drawer.getByRole("heading").first().innerText());
        const metadata = await readMetadata(page, drawer);
        await shoot(page, `details-r${row}-c${column}.png`);
        if (linksOrigin !== null && row === 0 && column === 0) {
          opened = await openLinks(page, context, drawer, metadata);
          await drawer.getByRole("tab", { name: "Metadata" }).click();
        }
        const evaluation = await readEvaluation(page, drawer);
        log(`row ${row} column ${column}: metadata and evaluation read`);
        await page.keyboard.press("Escape");
        await drawer.waitFor({ state: "hidden" });
        cells.push({ row, column, metrics, title, metadata, evaluation });
      }
    }
    const fileProbe = opened === null ? null : await probeFileLink(page, context, cells[0].metadata.transcript_path, consoleErrors);
    return { url, title: await page.title(), providers, metricsDialog, cells, opened, fileProbe, blockedRequests, consoleErrors };
  },
  { screenshotPath: screenshots ? path.join(screenshots, "failure.png") : null, viewport: { width: 1800, height: 1400 } },
);
