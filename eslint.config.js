import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Layers that must stay free of I/O and of any store implementation (see docs/ARCHITECTURE.md). */
const PURE_LAYERS = ['src/domain/**/*.ts'];

/** domain/ imports no node:* module, no driver, and nothing outside domain/ (`outside`: `../*`). */
function pureImports(outside) {
  return [
    'error',
    {
      patterns: [
        { group: ['node:*'], message: 'domain/ is pure: no node:* imports' },
        { group: ['pg', '@electric-sql/*'], message: 'domain/ knows no database driver' },
        { group: [outside], message: 'domain/ imports only from domain/' },
      ],
    },
  ];
}

/** The engine fails with EngineError(code, …) only: a plain Error surfaces as INTERNAL. */
const NO_PLAIN_ERRORS = {
  selector: 'NewExpression[callee.name=/^(Error|TypeError|RangeError|SyntaxError)$/]',
  message: 'the engine throws EngineError(code, message), never a plain Error',
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.memledger/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    files: PURE_LAYERS,
    rules: {
      'no-restricted-imports': pureImports('../*'),
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'domain/ takes time from the injected clock, not new Date()',
        },
        {
          selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
          message: 'domain/ takes time from the injected clock, not Date.now()',
        },
        NO_PLAIN_ERRORS,
      ],
    },
  },
  {
    // domain's own folders (domain/text/): one level up is still domain/
    files: ['src/domain/*/**/*.ts'],
    rules: { 'no-restricted-imports': pureImports('../../*') },
  },
  {
    files: ['src/**/*.ts'],
    ignores: PURE_LAYERS,
    rules: { 'no-restricted-syntax': ['error', NO_PLAIN_ERRORS] },
  },
  {
    files: ['src/history/**/*.ts', 'src/store/**/*.ts', 'src/engine.ts', 'src/index.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/pglite/*', '**/postgres/*'],
              message: 'shared code does not import an engine implementation',
            },
            { group: ['**/cli/*'], message: 'src/ never imports the CLI' },
          ],
        },
      ],
    },
  },
  {
    files: ['cli/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              // src/domain/ is pure: the CLI reads its rules without loading the engine
              group: ['../src/*/**', '../../src/*/**', '!../src/domain/**', '!../../src/domain/**'],
              message: 'the CLI calls the engine through src/index.ts only (src/domain/ aside)',
            },
          ],
        },
      ],
    },
  },
);
