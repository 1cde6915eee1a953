import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

// Time and chance come from the injected Clock and random(): only the clock itself
// and the CLI may touch the real ones (DESIGN.md, "Rules of the house").
const realTimeRestrictions = {
  'no-restricted-globals': [
    'error',
    { name: 'setTimeout', message: 'Use the injected Clock (src/util/clock.ts).' },
    { name: 'setInterval', message: 'Use the injected Clock (src/util/clock.ts).' },
    { name: 'clearTimeout', message: 'Use the injected Clock (src/util/clock.ts).' },
  ],
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
);
