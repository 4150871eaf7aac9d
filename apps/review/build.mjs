// Builds the review MCP App into ONE self-contained HTML file (script and style inlined), shipped as
// package data: src/mcp_server_ide/apps/review.html. Run `npm ci && npm run build` here after
// changing anything under src/, and commit the built file (the Python package needs no node).
import { build } from "esbuild";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "..", "src", "mcp_server_ide", "apps", "review.html");

// zod (used by the SDK to validate messages) re-exports ~50 translated error-message tables through a
// namespace object that the bundler cannot prune; the app needs English only (about 200 KiB less).
const englishOnlyZod = {
  name: "english-only-zod-locales",
  setup(b) {
    b.onLoad({ filter: /zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => ({
      contents: 'export { default as en } from "./en.js";',
      resolveDir: dirname(args.path),
    }));
  },
};

const bundle = await build({
  entryPoints: [join(here, "src", "main.js")],
  bundle: true,
  format: "iife",
  platform: "browser",
  target: ["es2020"],
  minify: true,
  legalComments: "none",
  write: false,
  define: { "process.env.NODE_ENV": '"production"' },
  plugins: [englishOnlyZod],
});
const script = bundle.outputFiles[0].text.replace(/<\/script/gi, "<\\/script").replace(/<!--/g, "<\\!--");
const style = readFileSync(join(here, "src", "style.css"), "utf8").replace(/<\/style/gi, "<\\/style");
const template = readFileSync(join(here, "src", "index.html"), "utf8");
const html = template.replace("/*STYLE*/", () => style).replace("/*SCRIPT*/", () => script);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, html);
console.log(`wrote ${out} (${(html.length / 1024).toFixed(1)} KiB)`);
