#!/usr/bin/env node
// The tablebase CLI. Project files are TypeScript and run without a build step (SPEC §1): tsx's
// loader is registered before anything else is imported.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/index.ts');
