#!/usr/bin/env node
// Entry point of the `gatehouse` command. The sources are TypeScript run as ESM through tsx's
// loader, so there is no build step between editing and running.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
