import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rejectedApiError } from '../testing/api-errors.js';
import { BUILTIN_TEMPLATES, isTemplateName, renderTemplate, TemplateStore } from './templates.js';

let root: string;
let dir: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'tb-email-tpl-'));
  dir = join(root, 'templates');
  await mkdir(dir);
  // A file beside (outside) the templates folder that traversal must never reach.
  await writeFile(join(root, 'secret.txt'), 'TOP SECRET');
  await writeFile(join(root, 'secret.subject'), 'TOP SECRET');
  await writeFile(join(dir, 'welcome.subject'), 'Welcome, {{name}}!\n');
  await writeFile(join(dir, 'welcome.txt'), 'Hi {{name}}');
  await writeFile(join(dir, 'welcome.html'), '<p>Hi {{name}}</p>');
  await writeFile(join(dir, 'htmlOnly.html'), '<p>{{x}}</p>');
  await writeFile(join(dir, 'subjectOnly.subject'), 'Nothing else');
  await writeFile(join(dir, 'resetPassword.txt'), 'Custom reset: {{link}}');
  await writeFile(join(dir, 'verifyEmail.subject'), 'Please verify {{email}}');
  await mkdir(join(dir, 'folder.txt'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('built-in templates', () => {
  it('verifyEmail and resetPassword exist with subject, text and html using link/email', () => {
    for (const t of Object.values(BUILTIN_TEMPLATES)) {
      expect(t.subject.length).toBeGreaterThan(0);
      expect(t.text).toContain('{{link}}');
      expect(t.html).toContain('href="{{link}}"');
      expect(t.text).toContain('{{email}}');
      // No external assets: no images, stylesheets, scripts or remote URLs besides the link.
      expect(t.html).not.toMatch(/<img|<link|<script|https?:\/\//i);
    }
  });

  it('load without a project folder answers the built-ins', async () => {
    const store = new TemplateStore();
    expect(await store.load('verifyEmail')).toEqual(BUILTIN_TEMPLATES.verifyEmail);
    expect(await store.load('resetPassword')).toEqual(BUILTIN_TEMPLATES.resetPassword);
  });

  it('a missing project folder falls back to the built-ins', async () => {
    const store = new TemplateStore(join(root, 'does-not-exist'));
    expect((await store.load('verifyEmail')).subject).toBe('Verify your email address');
  });
});

describe('project templates', () => {
  it('loads subject, text and html from files', async () => {
    const store = new TemplateStore(dir);
    const rendered = renderTemplate(await store.load('welcome'), { name: '<Ann>' });
    expect(rendered).toEqual({ subject: 'Welcome, <Ann>!', text: 'Hi <Ann>', html: '<p>Hi &lt;Ann&gt;</p>' });
  });

  it('allows a missing .txt or .html and a missing subject', async () => {
    expect(await new TemplateStore(dir).load('htmlOnly')).toEqual({ html: '<p>{{x}}</p>' });
  });

  it('answers 404 for a template with neither body file and for an unknown name', async () => {
    const store = new TemplateStore(dir);
    expect((await rejectedApiError(store.load('subjectOnly'))).code).toBe('NOT_FOUND');
    expect((await rejectedApiError(store.load('nope'))).code).toBe('NOT_FOUND');
    // A directory named like a body file is not a body.
    expect((await rejectedApiError(store.load('folder'))).code).toBe('NOT_FOUND');
  });

  it('project files override built-ins: bodies wholesale, subject falling back to the built-in', async () => {
    const store = new TemplateStore(dir);
    expect(await store.load('resetPassword')).toEqual({ subject: BUILTIN_TEMPLATES.resetPassword.subject, text: 'Custom reset: {{link}}' });
    // Only a subject file: keeps the built-in bodies.
    expect(await store.load('verifyEmail')).toEqual({
      subject: 'Please verify {{email}}',
      text: BUILTIN_TEMPLATES.verifyEmail.text,
      html: BUILTIN_TEMPLATES.verifyEmail.html,
    });
  });

  it('rejects names that could leave the folder, before touching the filesystem', async () => {
    const store = new TemplateStore(dir);
    for (const name of ['../secret', '..', '../templates/welcome', 'a/b', 'a\\b', '/etc/passwd', 'x.y', '', ' welcome', 'welcome\0', '.hidden']) {
      expect(isTemplateName(name)).toBe(false);
      const err = await rejectedApiError(store.load(name));
      expect(err.code).toBe('BAD_REQUEST');
      expect(err.details?.[0]?.path).toBe('/template');
      expect(JSON.stringify(err.toJSON())).not.toContain('SECRET');
    }
    expect(isTemplateName('welcome-2_x')).toBe(true);
    expect(isTemplateName('a'.repeat(101))).toBe(false);
  });
});
