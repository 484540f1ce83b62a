export function escapeHtml(value: string): string {
  return value
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

const STYLE = `
  body { font-family: system-ui, sans-serif; background: #f4f5f7; color: #1f2328; margin: 0; }
  main { max-width: 26rem; margin: 3rem auto; background: #fff; padding: 1.5rem 2rem;
         border-radius: 8px; box-shadow: 0 1px 3px rgb(0 0 0 / 0.15); }
  h1 { font-size: 1.5rem; margin: 0 0 1rem; }
  h2 { font-size: 1.1rem; }
  label { display: block; font-weight: 600; margin: 1rem 0 0.25rem; }
  input { width: 100%; box-sizing: border-box; padding: 0.5rem; font-size: 1rem; }
  .actions { display: flex; gap: 0.75rem; margin-top: 1.25rem; }
  button { flex: 1; padding: 0.6rem; font-size: 1rem; border-radius: 6px; cursor: pointer;
           border: 1px solid #8c959f; background: #fff; }
  button[value="allow"] { background: #1f6feb; border-color: #1f6feb; color: #fff; }
  button:focus-visible, input:focus-visible { outline: 3px solid #0969da; outline-offset: 2px; }
  .error { color: #b3261e; }
`;

/** A complete, script-free HTML page with the "Acme Tasks" heading. */
export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Acme Tasks</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>Acme Tasks</h1>
${body}
</main>
</body>
</html>`;
}
