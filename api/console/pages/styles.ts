/**
 * The console's own rules, after the theme's custom properties (api/connect/pages/theme.ts) so
 * that an environment's branding colours it as it does the hosted pages. A page is a header with
 * the navigation and the person, then one column of content: tables become stacked cards below
 * 720 px, so every page reads at phone width without sideways scrolling. System fonts, no
 * scripts, nothing fetched.
 */
export const CONSOLE_CSS = `
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;background:var(--page);color:var(--text);font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;font-size:15px;line-height:1.5;-webkit-font-smoothing:antialiased}
a{color:var(--accent-text);text-underline-offset:2px}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible{outline:2px solid var(--accent-text);outline-offset:2px}
.skip{position:absolute;left:-9999px}.skip:focus{left:12px;top:12px;z-index:2;background:var(--card);padding:8px 12px}
header.top{display:flex;flex-wrap:wrap;align-items:center;gap:8px 20px;padding:12px 24px;background:var(--card);border-bottom:1px solid var(--border)}
.product{font-weight:650;margin-right:8px;overflow-wrap:anywhere}
.env{font-size:12px;font-weight:600;padding:2px 8px;border-radius:999px;background:var(--tile);color:var(--muted)}
nav.sections ul{display:flex;flex-wrap:wrap;gap:4px 14px;list-style:none;margin:0;padding:0}
nav.sections a{display:inline-block;padding:6px 2px;color:var(--muted);text-decoration:none;font-weight:550}
nav.sections a[aria-current="page"]{color:var(--text);border-bottom:2px solid var(--accent)}
.who{margin-left:auto;display:flex;align-items:center;gap:12px;font-size:13px;color:var(--muted);overflow-wrap:anywhere}
.who form{margin:0}
main.console{max-width:1200px;margin:0 auto;padding:24px}
h1{margin:0 0 4px;font-size:22px;line-height:1.3;font-weight:650}
h2{margin:28px 0 10px;font-size:16px;font-weight:650}
.lead{margin:0 0 20px;color:var(--muted)}
.panel{background:var(--card);border:1px solid var(--border);border-radius:calc(var(--radius) + 4px);padding:20px;margin-bottom:20px;overflow-wrap:anywhere}
table.list{width:100%;border-collapse:collapse;background:var(--card);border:1px solid var(--border);border-radius:var(--radius);font-size:14px}
table.list th,table.list td{padding:10px 12px;border-bottom:1px solid var(--border);text-align:left;vertical-align:top;overflow-wrap:anywhere}
table.list th{font-size:12px;font-weight:600;letter-spacing:.04em;text-transform:uppercase;color:var(--subtle)}
.filters{display:flex;flex-wrap:wrap;gap:10px;align-items:flex-end;margin-bottom:16px}
.filters label{display:grid;gap:2px;font-size:12px;font-weight:600;color:var(--muted)}
input,select,textarea{font:inherit;font-size:14px;padding:7px 9px;border:1px solid var(--border);border-radius:var(--radius);background:var(--card);color:var(--text);max-width:100%}
textarea{width:100%;min-height:320px;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
button,.button{display:inline-block;font:inherit;font-weight:600;font-size:14px;padding:8px 14px;border-radius:var(--radius);border:1px solid transparent;background:var(--accent);color:var(--accent-fg);cursor:pointer;text-decoration:none}
button.quiet,.button.quiet{background:transparent;color:var(--text);border-color:var(--border)}
button.danger{background:transparent;color:var(--danger);border-color:var(--border)}
.actions{display:flex;flex-wrap:wrap;gap:10px;margin-top:16px}
.facts{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:6px 18px;margin:0;font-size:14px}
.facts dt{color:var(--subtle);font-weight:600}
.facts dd{margin:0;overflow-wrap:anywhere}
pre{margin:0;padding:12px 14px;max-height:420px;overflow:auto;border:1px solid var(--border);border-radius:var(--radius);background:var(--tile);font-size:12.5px;line-height:1.5}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.badge{display:inline-block;padding:1px 8px;border-radius:999px;font-size:12px;font-weight:600;background:var(--tile);color:var(--muted)}
.badge.ok{background:var(--success-soft);color:var(--success)}
.badge.bad{background:var(--danger-soft);color:var(--danger)}
.notice{padding:12px 14px;border-radius:var(--radius);background:var(--danger-soft);margin-bottom:16px}
.notice.good{background:var(--success-soft)}
.sbs{display:grid;grid-template-columns:1fr 1fr;gap:16px}
.muted{color:var(--muted)}
.empty{padding:24px;text-align:center;color:var(--subtle)}
.pager{margin-top:14px}
.part{margin-top:20px}
.part h2,.part h3{margin:12px 0 8px;font-size:14px}
.line{font-size:14px;overflow-wrap:anywhere}
.headers{width:100%;border-collapse:collapse;font-size:13px}
.headers th,.headers td{padding:6px 10px;border-bottom:1px solid var(--border);text-align:left;vertical-align:top;overflow-wrap:anywhere}
.measure{margin-bottom:8px;font-size:13px;color:var(--subtle)}
.none{font-size:14px;color:var(--subtle)}
.grant{display:grid;gap:8px;margin:16px 0 0;padding:12px 14px;border:1px solid var(--border);border-radius:var(--radius);font-size:14px}
.sbs>*{min-width:0}
.tool-review>h3{margin:0 0 6px;font-size:16px}
.tool-review>h3 code{font-size:inherit}
.side{margin:0 0 4px;font-size:12px;font-weight:600;letter-spacing:.04em;text-transform:uppercase;color:var(--subtle)}
.field{margin-top:14px}
.field h4{margin:0 0 6px;font-size:13px;font-weight:650}
details.field summary{cursor:pointer;font-size:13px}
details.field pre{margin-top:6px}
pre.diff{white-space:pre-wrap;overflow-wrap:anywhere}
pre.diff>*{display:block;text-decoration:none}
pre.diff del{background:var(--danger-soft)}
pre.diff ins{background:var(--success-soft)}
.issues{margin:0 0 16px;padding-left:20px}
@media (max-width:720px){
header.top{padding:10px 14px}.who{margin-left:0;width:100%}
main.console{padding:16px 12px}
table.list,table.list tbody,table.list tr,table.list td{display:block;width:100%}
table.list thead{display:none}
table.list tr{border-bottom:1px solid var(--border);padding:8px 0}
table.list td{border:0;padding:4px 12px}
table.list td[data-label]::before{content:attr(data-label);display:block;font-size:11px;font-weight:600;text-transform:uppercase;letter-spacing:.04em;color:var(--subtle)}
.sbs{grid-template-columns:1fr}
.facts{grid-template-columns:minmax(0,1fr)}.facts dd{margin-bottom:6px}
}
`
  .trim()
  .replace(/\n/g, '');
