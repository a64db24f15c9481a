// consent.mjs URL: opens an authorization URL that a real MCP client
// printed in Debian's chromium, approves drivemail's consent page and then
// the emulated Google's (as demo@example.com), and waits until the browser
// reaches the client's own redirect URI with a code. The client (Claude
// Code, Codex) is listening there and finishes the sign-in itself.
//
// Environment: DEMO_URL (drivemail), CHROMIUM (default /usr/bin/chromium),
// OUT (a folder for a screenshot when it fails).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const [authURL] = process.argv.slice(2);
const base = new URL(process.env.DEMO_URL);
const out = process.env.OUT ?? tmpdir();
if (!authURL) throw new Error("usage: node consent.mjs AUTHORIZATION_URL");

const deadline = setTimeout(() => {
  console.error("consent: timed out after 60 s");
  process.exit(1);
}, 60000);

const dir = mkdtempSync(join(tmpdir(), "drivemail-consent-"));
const context = await chromium.launchPersistentContext(dir, {
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const page = context.pages()[0] ?? (await context.newPage());
let code = 0;
try {
  await page.goto(authURL);
  await page.locator("#consent").waitFor({ timeout: 15000 });
  await page.locator("#approve").click();
  // The emulated Google's page: the demo account, every permission.
  await page.waitForURL((u) => u.origin !== base.origin, { timeout: 15000 });
  await page.locator("form#consent").waitFor({ timeout: 15000 });
  await page.locator('#accounts input[data-email="demo@example.com"]').check();
  await page.locator("#approve").click();
  // Back through drivemail's callback to the client's redirect URI.
  await page.waitForURL((u) => u.origin !== base.origin && (u.searchParams.has("code") || u.searchParams.has("error")), { timeout: 15000 });
  const landed = new URL(page.url());
  if (landed.searchParams.has("error")) {
    throw new Error(`the authorization failed: ${landed.searchParams.get("error")}: ${landed.searchParams.get("error_description")}`);
  }
  console.log(`consent: approved; the browser is at ${landed.origin}${landed.pathname}`);
} catch (err) {
  code = 1;
  console.error(`consent: ${err.message}\n  page: ${page.url()}`);
  try {
    console.error(`  text: ${(await page.locator("body").innerText({ timeout: 2000 })).slice(0, 800).replace(/\n+/g, " | ")}`);
    await page.screenshot({ path: join(out, "consent-failure.png"), fullPage: true });
  } catch {
    // the page is gone; the error says enough
  }
} finally {
  clearTimeout(deadline);
  await context.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
