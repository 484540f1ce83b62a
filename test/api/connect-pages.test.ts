import { describe, expect, it } from '@jest/globals';
import { contrast } from '../../api/connect/pages/color.js';
import { escapeHtml, safeColor, safeUrl } from '../../api/connect/pages/html.js';
import {
  CONTENT_SECURITY_POLICY,
  DEFAULT_BRANDING,
  renderConnectPage,
  renderErrorPage,
  renderSuccessPage,
  type AppInfo,
  type ConnectBranding,
} from '../../api/connect/pages/index.js';
import { DARK_PALETTE, LIGHT_PALETTE } from '../../api/connect/pages/theme.js';
import { FLOW_PROBLEMS, type FlowProblem } from '../../api/connect/flow-errors.js';
import { requestedScopes } from '../../api/connect/requested-scopes.js';
import { findApp, type AppDefinition } from '../../workflows/catalog/index.js';

const app: AppInfo = { id: 'acme', name: 'Acme Tasks' };
const START = 'https://gatehouse.example/connect/start?t=tok_123';

function branding(overrides: Partial<ConnectBranding> = {}): ConnectBranding {
  return {
    displayName: 'Acme Corp',
    accentColor: '#0ea5e9',
    logoUrl: null,
    supportUrl: null,
    theme: { mode: 'system' },
    ...overrides,
  };
}

function connect(b: ConnectBranding = branding()): string {
  return renderConnectPage({
    branding: b,
    app,
    startUrl: START,
    scopes: [{ scope: 'tasks:read' }],
  });
}

/** The declarations of `:root`/media blocks, i.e. what the branding put in the stylesheet. */
function css(page: string): string {
  return /<style>([\s\S]*?)<\/style>/.exec(page)?.[1] ?? '';
}

describe('layout', () => {
  it.each([
    ['connect', connect()],
    ['success', renderSuccessPage({ branding: branding(), app })],
    ['error', renderErrorPage({ branding: branding(), title: 't', message: 'm', code: 'c' })],
  ])('%s page is a complete, self-contained document', (_name, page) => {
    expect(page.startsWith('<!doctype html>')).toBe(true);
    expect(page).toContain('<html lang="en">');
    expect(page).toContain('<meta charset="utf-8" />');
    expect(page).toContain(
      '<meta name="viewport" content="width=device-width, initial-scale=1" />',
    );
    expect(page).toContain('<meta name="robots" content="noindex" />');
    expect(page).toContain('<meta name="referrer" content="no-referrer" />');
    expect(page).toMatch(/<title>[^<]+<\/title>/);
    expect(page).toContain('<style>');
    expect(page).not.toMatch(/<script|<link|@import|url\(/i);
    expect(page.match(/<h1>/g)).toHaveLength(1);
    expect(page.trimEnd().endsWith('</html>')).toBe(true);
  });

  it('exports the content security policy the route sends', () => {
    expect(CONTENT_SECURITY_POLICY).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; img-src https: http: data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    );
  });
});

describe('connect page', () => {
  const page = renderConnectPage({
    branding: branding({ supportUrl: 'https://acme.example/help' }),
    app,
    userLabel: 'jane@acme.example',
    startUrl: START,
    scopes: [
      { scope: 'tasks:read' },
      { scope: 'projects:write' },
      { scope: 'https://www.googleapis.com/auth/calendar' },
    ],
  });

  it('says what happens and what is requested', () => {
    expect(page).toContain('<title>Connect Acme Tasks to Acme Corp</title>');
    // Each name is kept whole on one line, never broken as "Connect Acme / Tasks to …".
    expect(page).toContain(
      '<h1>Connect <span class="keep">Acme Tasks</span> to <span class="keep">Acme Corp</span></h1>',
    );
    expect(page).toContain('sent to Acme Tasks to sign in and approve access');
    expect(page).toContain('<strong>jane@acme.example</strong>');
    expect(page).toContain('Requested permissions');
    expect(page).toContain('<span>tasks:read</span>');
    expect(page).toContain('<span>projects:write</span>');
    expect(page).toContain('https:/<wbr />/<wbr />www.googleapis.com/<wbr />auth/<wbr />calendar');
    expect(page).toContain(`<a class="button" href="${START}">Continue to Acme Tasks</a>`);
    expect(page.replace(/\s+/g, ' ')).toContain(
      'Secured by Gatehouse. Your Acme Tasks password is never shared with Acme Corp.',
    );
    expect(page).toContain('Need help?');
    expect(page).toContain('href="https://acme.example/help"');
    expect(page).toContain('>Contact Acme Corp support</a');
  });

  it('shows scopes in words where the catalog knows them, by name otherwise', () => {
    const worded = renderConnectPage({
      branding: branding(),
      app,
      startUrl: START,
      scopes: requestedScopes(findApp('acme') as AppDefinition),
    });
    expect(worded).toContain('<span>Know which account you signed in with</span>');
    expect(worded).toContain('<span>See your tasks</span>');
    expect(worded).toContain('<span>Create, change and delete your tasks</span>');
    expect(worded).not.toContain('tasks:read');
    expect(worded).not.toContain('openid');
    const calendar = renderConnectPage({
      branding: branding(),
      app: { id: 'google-calendar', name: 'Google Calendar' },
      startUrl: START,
      scopes: requestedScopes(findApp('google-calendar') as AppDefinition),
    });
    expect(calendar).toContain('<span>See the list of calendars you use</span>');
    expect(calendar).toContain(
      '<span>See, create, change and delete events on your calendars</span>',
    );
    expect(calendar).not.toContain('googleapis.com');
    const mixed = renderConnectPage({
      branding: branding(),
      app,
      startUrl: START,
      scopes: [{ scope: 'tasks:read', description: 'See your tasks' }, { scope: 'beta:x' }],
    });
    expect(mixed).toContain('<span>See your tasks</span>');
    expect(mixed).toContain('<span>beta:x</span>');
  });

  it('leaves out the user line and the permissions box when there is nothing to show', () => {
    const bare = renderConnectPage({ branding: branding(), app, startUrl: START, scopes: [] });
    expect(bare).not.toContain('Connecting as');
    expect(bare).not.toContain('Requested permissions');
  });

  it('renders a disabled button rather than a link to an unusable start URL', () => {
    const page = renderConnectPage({
      branding: branding(),
      app,
      startUrl: 'javascript:alert(1)',
      scopes: [],
    });
    expect(page).toContain('aria-disabled="true"');
    expect(page).not.toContain('javascript:');
  });
});

describe('success page', () => {
  it('offers the way back when there is one', () => {
    const page = renderSuccessPage({
      branding: branding(),
      app,
      redirectUrl: 'https://acme.example/settings',
    });
    expect(page).toContain('<h1><span class="keep">Acme Tasks</span> is connected</h1>');
    expect(page).toContain('class="status status-success"><svg');
    expect(page).toContain('<path d="M20 6 9 17l-5-5" />');
    expect(page).toContain(
      '<a class="button" href="https://acme.example/settings">Return to Acme Corp</a>',
    );
    expect(page).not.toContain('You can close this window.');
  });

  it.each([undefined, 'javascript:history.back()'])(
    'otherwise says the window can be closed (redirectUrl %p)',
    (redirectUrl) => {
      const page = renderSuccessPage({ branding: branding(), app, redirectUrl });
      expect(page).toContain('You can close this window.');
      expect(page).not.toContain('Return to');
    },
  );
});

describe('error page', () => {
  it('explains, shows the code and offers a retry and support', () => {
    const page = renderErrorPage({
      branding: branding({ supportUrl: 'https://acme.example/help' }),
      app,
      title: 'This link has expired',
      message: 'Ask Acme Corp for a new link.',
      code: 'connect_link_expired',
      retryUrl: 'https://acme.example/reconnect',
    });
    expect(page).toContain('<title>This link has expired · Acme Tasks</title>');
    expect(page).toContain('<h1>This link has expired</h1>');
    expect(page).toContain('Ask Acme Corp for a new link.');
    expect(page).toContain('Connecting Acme Tasks');
    expect(page).toContain('<code>connect_link_expired</code>');
    expect(page).toContain('<a class="button" href="https://acme.example/reconnect">Try again</a>');
    expect(page).toContain('href="https://acme.example/help"');
  });

  it('leads to the product support when the way on goes through the product', () => {
    const page = renderErrorPage({
      branding: branding({ supportUrl: 'https://acme.example/help' }),
      app,
      title: 'This link has already been used',
      message: 'Ask Acme Corp for a new link.',
      code: 'link_used',
      supportFirst: true,
    });
    expect(page).toMatch(
      /<a class="button" href="https:\/\/acme\.example\/help" rel="noopener noreferrer"\s*>Contact Acme Corp support<\/a/,
    );
    // One way to support, not two.
    expect(page.match(/Contact Acme Corp support/g)).toHaveLength(1);
    expect(page).not.toContain('Need help?');
  });

  it('works without an app, a retry URL or a support URL', () => {
    const page = renderErrorPage({ branding: branding(), title: 'T', message: 'M', code: 'C' });
    expect(page).toContain('<title>T</title>');
    expect(page).not.toContain('Connecting ');
    expect(page).not.toContain('Try again');
    expect(page).not.toContain('Contact support');
  });
});

describe('connect flow problems', () => {
  const problems = Object.keys(FLOW_PROBLEMS) as FlowProblem[];

  it.each(problems)('%s points to the named product, never to Gatehouse', (problem) => {
    const text = FLOW_PROBLEMS[problem];
    const named = text.message({ product: 'Northwind', appName: 'Acme Tasks' });
    const unnamed = text.message({ product: null, appName: 'Acme Tasks' });
    for (const message of [named, unnamed]) expect(message).not.toMatch(/gatehouse/i);
    if (text.supportFirst) {
      expect(named).toContain('Northwind');
      expect(unnamed).toMatch(/the app or website that sent you the link/i);
    }
  });

  it('asks the product, not Gatehouse, for a new link', () => {
    const message = FLOW_PROBLEMS.link_used.message({
      product: 'Northwind',
      appName: 'Acme Tasks',
    });
    expect(message).toBe(
      'Each link works once. If you need to connect again, ask Northwind for a new link.',
    );
    expect(FLOW_PROBLEMS.link_expired.message({ product: null, appName: 'Acme Tasks' })).toBe(
      'Connect links are valid for a limited time. Ask the app or website that sent you the link for a new link.',
    );
  });
});

describe('branding', () => {
  it('puts the accent colour and radius in the stylesheet', () => {
    const style = css(
      connect(branding({ accentColor: '#0ea5e9', theme: { mode: 'light', radius: 4 } })),
    );
    expect(style).toContain('--accent:#0ea5e9');
    expect(style).toContain('--radius:4px');
    expect(css(connect())).toContain('--radius:10px');
  });

  it.each(['#0EA5E9', '#fff', 'red', '#12345g', '#0ea5e9;}body{display:none', ''])(
    'replaces the invalid colour %p with the default',
    (accentColor) => {
      const style = css(connect(branding({ accentColor })));
      expect(/--accent:([^;]*);/.exec(style)?.[1]).toBe(DEFAULT_BRANDING.accentColor);
      expect(style).not.toContain('display:none');
    },
  );

  it('keeps text on and in the accent colour readable', () => {
    for (const accent of ['#fde047', '#4f46e5', '#111111', '#22c55e']) {
      const style = css(connect(branding({ accentColor: accent, theme: { mode: 'system' } })));
      const fg = /--accent-fg:(#[0-9a-f]{6})/.exec(style)?.[1] ?? '';
      expect(contrast(fg, accent)).toBeGreaterThanOrEqual(4.5);
      const texts = [...style.matchAll(/--accent-text:(#[0-9a-f]{6})/g)].map((m) => m[1] ?? '');
      expect(texts).toHaveLength(2);
      expect(contrast(texts[0] ?? '', LIGHT_PALETTE.card)).toBeGreaterThanOrEqual(4.5);
      expect(contrast(texts[1] ?? '', DARK_PALETTE.card)).toBeGreaterThanOrEqual(4.5);
    }
  });

  it('shows the logo, with the display name as alt text, only when set', () => {
    const withLogo = connect(branding({ logoUrl: 'https://cdn.acme.example/logo.png' }));
    expect(withLogo).toMatch(
      /<img src="https:\/\/cdn\.acme\.example\/logo\.png" alt="Acme Corp"\s*\/>/,
    );
    const success = renderSuccessPage({
      branding: branding({ logoUrl: 'https://cdn.acme.example/logo.png' }),
      app,
    });
    expect(success).toContain('alt="Acme Corp"');
    expect(connect()).not.toContain('<img');
    expect(renderSuccessPage({ branding: branding(), app })).not.toContain('<img');
  });

  it('shows the support link only when set, named after the product', () => {
    expect(connect()).not.toContain('Contact');
    expect(connect(branding({ supportUrl: 'https://acme.example/help' }))).toContain(
      '>Contact Acme Corp support</a',
    );
    // Unnamed, the support is nobody's in particular: never "Gatehouse support".
    const unnamed = connect(
      branding({ displayName: DEFAULT_BRANDING.displayName, supportUrl: 'https://x.example/' }),
    );
    expect(unnamed).toContain('>Contact support</a');
  });

  it('falls back to the default display name when it is blank', () => {
    expect(connect(branding({ displayName: '  ' }))).toContain('Connect Acme Tasks to Gatehouse');
  });
});

describe('theme modes', () => {
  const style = (mode: ConnectBranding['theme']['mode']): string =>
    css(connect(branding({ theme: { mode } })));

  it('light forces the light palette only', () => {
    const s = style('light');
    expect(s).toContain('color-scheme:light;');
    expect(s).toContain(`--page:${LIGHT_PALETTE.page}`);
    expect(s).not.toContain(`--page:${DARK_PALETTE.page}`);
    expect(s).not.toContain('prefers-color-scheme');
  });

  it('dark forces the dark palette only', () => {
    const s = style('dark');
    expect(s).toContain('color-scheme:dark;');
    expect(s).toContain(`--page:${DARK_PALETTE.page}`);
    expect(s).not.toContain(`--page:${LIGHT_PALETTE.page}`);
    expect(s).not.toContain('prefers-color-scheme');
  });

  it('system follows the operating system', () => {
    const s = style('system');
    expect(s).toContain('color-scheme:light dark;');
    expect(s).toMatch(
      new RegExp(
        `--page:${LIGHT_PALETTE.page}.*@media \\(prefers-color-scheme: dark\\)\\{:root\\{[^}]*--page:${DARK_PALETTE.page}`,
      ),
    );
  });
});

describe('URLs', () => {
  const unsafe = [
    'javascript:alert(1)',
    ' JavaScript:alert(1)',
    'java\tscript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:msgbox(1)',
    '/relative/path',
    'not a url',
  ];

  it.each(unsafe)('drops %p from every href and src', (url) => {
    const b = branding({ logoUrl: url, supportUrl: url });
    const pages = [
      renderConnectPage({ branding: b, app, startUrl: url, scopes: [] }),
      renderSuccessPage({ branding: b, app, redirectUrl: url }),
      renderErrorPage({ branding: b, app, title: 't', message: 'm', code: 'c', retryUrl: url }),
    ];
    for (const page of pages) {
      expect(page).not.toMatch(/script:|data:|\/relative|not a url/i);
      expect(page).not.toMatch(/\b(href|src)=/);
    }
  });

  it('accepts http and https only', () => {
    expect(safeUrl('https://a.example/x?y=1')).toBe('https://a.example/x?y=1');
    expect(safeUrl('http://a.example')).toBe('http://a.example/');
    expect(safeUrl('ftp://a.example')).toBeNull();
    expect(safeUrl(null)).toBeNull();
    expect(safeUrl('')).toBeNull();
  });
});

describe('escaping', () => {
  it('escapes the five special characters', () => {
    expect(escapeHtml(`<a href="x" title='y'>&amp;</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;',
    );
    expect(safeColor('#abcdef', '#000000')).toBe('#abcdef');
    expect(safeColor('#ABCDEF', '#000000')).toBe('#000000');
  });

  const SCRIPT = '<script>alert(1)</script>';
  const ATTR = `"onmouseover="alert(1)`;
  const ATTR_SINGLE = `' onmouseover='alert(1)`;
  const EVIL_URL = `https://evil.example/?q="><script>alert(1)</script>'onmouseover=x`;

  type Fields = Record<
    | 'displayName'
    | 'appName'
    | 'userLabel'
    | 'scope'
    | 'scopeWords'
    | 'title'
    | 'message'
    | 'code'
    | 'logoUrl'
    | 'supportUrl'
    | 'startUrl'
    | 'redirectUrl'
    | 'retryUrl',
    string
  >;
  const benign: Fields = {
    displayName: 'Acme Corp',
    appName: 'Acme Tasks',
    userLabel: 'jane',
    scope: 'tasks',
    scopeWords: 'See your tasks',
    title: 'Expired',
    message: 'Ask again',
    code: 'expired',
    logoUrl: 'https://cdn.example/logo.png',
    supportUrl: 'https://help.example/',
    startUrl: 'https://gatehouse.example/start',
    redirectUrl: 'https://acme.example/back',
    retryUrl: 'https://acme.example/retry',
  };
  const urlFields = new Set(['logoUrl', 'supportUrl', 'startUrl', 'redirectUrl', 'retryUrl']);

  function renderAll(f: Fields): string[] {
    const b = branding({
      displayName: f.displayName,
      logoUrl: f.logoUrl,
      supportUrl: f.supportUrl,
    });
    const a = { id: 'acme', name: f.appName };
    return [
      renderConnectPage({
        branding: b,
        app: a,
        userLabel: f.userLabel,
        startUrl: f.startUrl,
        scopes: [{ scope: f.scope }, { scope: 'x', description: f.scopeWords }],
      }),
      renderSuccessPage({ branding: b, app: a, redirectUrl: f.redirectUrl }),
      renderErrorPage({
        branding: b,
        app: a,
        title: f.title,
        message: f.message,
        code: f.code,
        retryUrl: f.retryUrl,
      }),
    ];
  }

  // Markup characters outside of user data; scope splitting adds <wbr /> for each slash.
  const shape = (page: string): string => page.replace(/<wbr \/>/g, '').replace(/[^<>"']/g, '');

  const cases: [keyof Fields, string][] = (Object.keys(benign) as (keyof Fields)[]).flatMap(
    (field): [keyof Fields, string][] =>
      urlFields.has(field)
        ? [[field, EVIL_URL]]
        : [
            [field, SCRIPT],
            [field, ATTR],
            [field, ATTR_SINGLE],
          ],
  );

  it.each(cases)('%s cannot inject markup with %p', (field, payload) => {
    const clean = renderAll(benign);
    const attacked = renderAll({ ...benign, [field]: payload });
    attacked.forEach((page, i) => {
      expect(page).not.toContain('<script');
      expect(page).not.toMatch(/["']\s*onmouseover=/);
      // The payload added text, never a tag, attribute or quote.
      expect(shape(page)).toBe(shape(clean[i] ?? ''));
    });
    const all = attacked.join('\n').replace(/<wbr \/>/g, '');
    if (payload === SCRIPT) expect(all).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    if (payload === ATTR) expect(all).toContain('&quot;onmouseover=&quot;alert(1)');
    if (payload === ATTR_SINGLE) expect(all).toContain('&#39; onmouseover=&#39;alert(1)');
    if (payload === EVIL_URL) expect(all).toContain('="https://evil.example/?q=%22%3E%3Cscript');
  });
});
