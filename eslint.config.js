import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

// Time and chance come from the injected Clock and random(): only the clock itself
// and the CLI may touch the real ones (DESIGN.md, "Rules of the house").
// Node's timers only in util/timer.ts, the one primitive that takes any delay (past
// 2^31 - 1 ms they fire after 1 ms): the CLI's real-time waits use it too.
const nodeTimerRestrictions = {
  'no-restricted-globals': [
    'error',
    { name: 'setTimeout', message: 'Use the injected Clock (src/util/clock.ts), or setLongTimeout (src/util/timer.ts) in the CLI.' },
    { name: 'setInterval', message: 'Use the injected Clock (src/util/clock.ts), or setLongTimeout (src/util/timer.ts) in the CLI.' },
    { name: 'clearTimeout', message: 'Use the injected Clock (src/util/clock.ts), or clearLongTimeout (src/util/timer.ts) in the CLI.' },
    { name: 'clearInterval', message: 'Use the injected Clock (src/util/clock.ts), or clearLongTimeout (src/util/timer.ts) in the CLI.' },
  ],
};
const realTimeRestrictions = {
  'no-restricted-properties': [
    'error',
    { object: 'Date', property: 'now', message: 'Use clock.now() from the injected Clock.' },
    { object: 'Math', property: 'random', message: 'Use the injected random().' },
  ],
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'build/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  // The dashboard's browser code (web/src, its own tsconfig with the DOM lib): browser globals, not Node's.
  {
    files: ['web/src/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**', 'src/util/clock.ts'],
    rules: realTimeRestrictions,
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/util/timer.ts'],
    rules: nodeTimerRestrictions,
  },
);
