import { buildProgram } from './program.js';

// The entry point bin.js loads: parses the process's arguments and runs the command they name.
await buildProgram().parseAsync();
