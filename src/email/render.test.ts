import { describe, it, expect } from 'vitest';
import { cleanSubject, escapeHtml, renderString, renderTemplate } from './render.js';

describe('renderString', () => {
  it('substitutes variables, tolerating spaces inside the braces', () => {
    expect(renderString('Hi {{name}}, {{ count }} new', { name: 'Ann', count: 3 }, { html: false })).toBe('Hi Ann, 3 new');
  });

  it('HTML-escapes values in html and leaves them raw in text', () => {
    const vars = { name: `<script>alert("x")</script> & 'co'` };
    expect(renderString('<p>{{name}}</p>', vars, { html: true })).toBe('<p>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;co&#39;</p>');
    expect(renderString('{{name}}', vars, { html: false })).toBe(vars.name);
  });

  it('renders unknown variables, null and undefined as empty', () => {
    expect(renderString('[{{missing}}][{{n}}][{{u}}]', { n: null, u: undefined }, { html: false })).toBe('[][][]');
  });

  it('walks nested objects through own properties only', () => {
    expect(renderString('{{user.name}} {{user.plan.tier}}', { user: { name: 'Bo', plan: { tier: 'pro' } } }, { html: false })).toBe('Bo pro');
    expect(renderString('[{{constructor}}][{{toString}}][{{user.__proto__}}][{{user.name.length}}]', { user: { name: 'Bo' } }, { html: false })).toBe('[][][][]');
  });

  it('formats numbers, booleans, dates, arrays and objects', () => {
    const out = renderString('{{a}}|{{b}}|{{d}}|{{l}}|{{o}}', { a: 1.5, b: false, d: new Date('2024-05-01T10:20:30.123Z'), l: [1, 'x'], o: { k: 1 } }, { html: false });
    expect(out).toBe('1.5|false|2024-05-01T10:20:30.123Z|[1,"x"]|{"k":1}');
  });

  it('does not expand placeholders that arrive inside values (single pass)', () => {
    expect(renderString('{{a}} {{b}}', { a: '{{b}}', b: 'B' }, { html: false })).toBe('{{b}} B');
  });

  it('leaves malformed placeholders alone', () => {
    expect(renderString('{{ 1x }} {{a-b}} {x}', { x: 'X' }, { html: false })).toBe('{{ 1x }} {{a-b}} {x}');
  });
});

describe('renderTemplate', () => {
  it('renders each part, collapsing the subject to one line', () => {
    const out = renderTemplate({ subject: 'Hello {{name}}\n', text: 'T {{name}}', html: '<b>{{name}}</b>' }, { name: 'A&B\r\nBcc: evil@example.com' });
    expect(out.subject).toBe('Hello A&B Bcc: evil@example.com');
    expect(out.text).toBe('T A&B\r\nBcc: evil@example.com');
    expect(out.html).toBe('<b>A&amp;B\r\nBcc: evil@example.com</b>');
  });

  it('omits parts the template does not have', () => {
    expect(renderTemplate({ html: '<i>{{x}}</i>' }, { x: 1 })).toEqual({ html: '<i>1</i>' });
  });

  it('escapeHtml and cleanSubject', () => {
    expect(escapeHtml(`&<>"'`)).toBe('&amp;&lt;&gt;&quot;&#39;');
    expect(cleanSubject('  a \t b\n')).toBe('a b');
  });
});
