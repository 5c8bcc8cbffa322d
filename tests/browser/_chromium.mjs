// Shared by the browser scripts: launch the system Chromium through playwright-core (which never downloads a
// browser of its own), keep the page off the network, collect console errors, and print one JSON result.
//
// Contract with tests/browser_helpers.py: a script prints exactly one JSON document on stdout and exits 0;
// on failure it prints {"error", "screenshot": path|null, "pageText": what the page showed} and exits 1.
// Diagnostics go to stderr.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";

export const CHROMIUM = process.env.PASSHAT_CHROMIUM || "/usr/bin/chromium";
// Waits for elements and text; launching the browser and loading a page get at least a minute (a loaded CI box).
export const TIMEOUT_MS = Number(process.env.PASSHAT_BROWSER_TIMEOUT_MS || 60000);
const SLOW_MS = Math.max(TIMEOUT_MS, 60000);

const ARGS = [
  "--headless=new",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
];

/** A persistent context in a fresh user-data-dir (removed on close), so no profile state leaks between runs. */
export async function openBrowser({ viewport = { width: 1600, height: 1000 } } = {}) {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install the Debian package (make system-deps) or set PASSHAT_CHROMIUM.`);
  }
  // Chromium puts its singleton socket under TMPDIR and aborts when that path passes the 108-byte limit of a
  // unix socket (a pytest tmp_path does): a long TMPDIR is replaced by /tmp.
  const tmp = os.tmpdir().length <= 60 ? os.tmpdir() : "/tmp";
  const userDataDir = fs.mkdtempSync(path.join(tmp, "passhat-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    env: { ...process.env, TMPDIR: tmp },
    headless: true,
    args: ARGS,
    ignoreDefaultArgs: ["--headless"],
    viewport,
    timeout: SLOW_MS,
  });
  context.setDefaultTimeout(TIMEOUT_MS);
  context.setDefaultNavigationTimeout(SLOW_MS);
  const page = context.pages()[0] ?? (await context.newPage());
  const close = async () => {
    await context.close().catch(() => {});
    fs.rmSync(userDataDir, { recursive: true, force: true });
  };
  return { context, page, close };
}

/**
 * Abort every request whose URL `allowed(url)` rejects (`rule` says why, in the record), and record requests
 * that were blocked or failed, each once, as {url, reason}. Returns the live list.
 */
export async function guardNetwork(context, allowed, rule = "not an allowed origin") {
  const failed = [];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (allowed(url)) return route.continue();
    failed.push({ url, reason: `blocked: ${rule}` });
    return route.abort("blockedbyclient");
  });
  context.on("requestfailed", (request) => {
    const url = request.url();
    if (failed.some((f) => f.url === url)) return;
    failed.push({ url, reason: request.failure()?.errorText ?? "failed" });
  });
  return failed;
}

/** Console errors and uncaught page errors, as strings. */
export function collectConsoleErrors(page) {
  const errors = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`));
  return errors;
}

/**
 * Run `body({page, context})` in a fresh browser and print its result as JSON. On any error, save a
 * screenshot to `screenshotPath` (when given), print {error, screenshot, pageText} and exit 1.
 */
export async function runScript(body, { screenshotPath = null, viewport } = {}) {
  let browser = null;
  try {
    browser = await openBrowser({ viewport });
    const result = await body(browser);
    process.stdout.write(JSON.stringify(result) + "\n");
  } catch (error) {
    let screenshot = null;
    if (browser && screenshotPath) {
      try {
        fs.mkdirSync(path.dirname(screenshotPath), { recursive: true });
        await browser.page.screenshot({ path: screenshotPath, fullPage: true, timeout: 15000 });
        screenshot = screenshotPath;
      } catch (shotError) {
        process.stderr.write(`screenshot failed: ${shotError}\n`);
      }
    }
    let pageText = null;
    if (browser) pageText = squash(await browser.page.locator("body").innerText({ timeout: 5000 }).catch(() => "")).slice(0, 600);
    process.stderr.write(`${error?.stack ?? error}\n`);
    process.stdout.write(JSON.stringify({ error: String(error?.message ?? error), screenshot, pageText }) + "\n");
    process.exitCode = 1;
  } finally {
    if (browser) await browser.close();
  }
}

const started = Date.now();
/** A progress line on stderr, with seconds since start (shown by the Python helper when a script fails). */
export const log = (message) => process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${message}\n`);

/** Collapse runs of whitespace, as a reader sees the text. */
export const squash = (text) => (text ?? "").replace(/\s+/g, " ").trim();
