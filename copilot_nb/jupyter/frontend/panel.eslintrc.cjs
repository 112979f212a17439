// ESLint for the chat panel's JavaScript (../panel/*.js, an anywidget served by the kernel): the
// TypeScript's own settings (package.json's eslintConfig and prettier), with TypeScript's parser
// reading the files through tsconfig.panel.json. The files are joined into one module before they
// run (widget.py), so a name one of them declares at the top is used by another: unused-variable
// checks stop at the top level there, and TypeScript finds a name that is nowhere declared.
const { eslintConfig: base, prettier } = require('./package.json');

module.exports = {
  ...base,
  root: true,
  env: { browser: true, es2022: true },
  parserOptions: {
    project: 'tsconfig.panel.json',
    tsconfigRootDir: __dirname,
    sourceType: 'script'
  },
  rules: {
    ...base.rules,
    'no-undef': 'off',
    'prettier/prettier': ['error', prettier, { usePrettierrc: false }],
    '@typescript-eslint/no-unused-vars': ['warn', { args: 'none', vars: 'local' }]
  }
};
