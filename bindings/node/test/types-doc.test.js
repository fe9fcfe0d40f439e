'use strict';
// index.d.ts is the reference users read in their editor: every declaration
// in it carries a JSDoc comment, checked here with the TypeScript compiler's
// own parser (typescript is a devDependency). The exports of index.js that
// index.d.ts must declare are checked in packaging.test.js; the converse
// (what index.d.ts declares exists at runtime, with that class hierarchy,
// and each error class's JSDoc names its runtime code and status) is
// checked here.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const DTS = path.join(__dirname, '..', 'index.d.ts');

/** A `/** ... *\/` comment with some text or tags attached to `node`
 * (plain `//` and `/* *\/` comments, and empty JSDoc, do not count). */
function hasJsDoc(node) {
  return ts.getJSDocCommentsAndTags(node).some((doc) => {
    if (!ts.isJSDoc(doc)) return false;
    const text = doc.comment === undefined ? '' : ts.getTextOfJSDocComment(doc.comment) ?? '';
    return text.trim() !== '' || (doc.tags !== undefined && doc.tags.length > 0);
  });
}

function isHidden(member) {
  if (member.name && ts.isPrivateIdentifier(member.name)) return true;
  const flags = ts.getCombinedModifierFlags(member);
  return (flags & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) !== 0;
}

/** How a member is named in reports, and the key its overloads share. */
function memberName(member, sf) {
  switch (member.kind) {
    case ts.SyntaxKind.Constructor:
      return 'constructor';
    case ts.SyntaxKind.ConstructSignature:
      return 'new()';
    case ts.SyntaxKind.CallSignature:
      return '()';
    case ts.SyntaxKind.IndexSignature:
      return `[${member.parameters.map((p) => p.getText(sf)).join(', ')}]`;
    default:
      return member.name ? member.name.getText(sf) : '?';
  }
}

/**
 * The declarations of a .d.ts text and those without a JSDoc comment.
 * Checked: every top-level declaration (exported, or declared for use by
 * exported ones, like a base class) - class, interface, type alias,
 * function, const/let/var, enum, namespace (and what it declares) - and
 * every member of classes and interfaces except private and protected ones:
 * properties, methods, constructors, accessors, index, call and construct
 * signatures. Overloads (and a get/set pair) need one JSDoc, on the first.
 */
function checkDocs(text, fileName = 'index.d.ts') {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const declarations = [];
  const members = [];
  const offenders = [];
  const lineOf = (node) => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
  const check = (list, node, name, seen, key) => {
    const entry = { line: lineOf(node), name };
    list.push(entry);
    // Later overloads (and a setter after its getter) share the first's JSDoc.
    if (seen.has(key)) return;
    seen.add(key);
    if (!hasJsDoc(node)) offenders.push(entry);
  };
  const checkMembers = (owner, ownerName) => {
    const seen = new Set();
    for (const m of owner.members) {
      if (m.kind === ts.SyntaxKind.SemicolonClassElement || isHidden(m)) continue;
      const name = memberName(m, sf);
      const isStatic = (ts.getCombinedModifierFlags(m) & ts.ModifierFlags.Static) !== 0;
      check(members, m, `${ownerName}${isStatic ? '.static ' : '.'}${name}`, seen, `${isStatic}:${name}`);
    }
  };
  const walk = (statements, prefix) => {
    const seen = new Set();
    for (const s of statements) {
      if (ts.isVariableStatement(s)) {
        for (const d of s.declarationList.declarations) {
          const name = prefix + d.name.getText(sf);
          check(declarations, d, name, seen, `var:${name}`);
        }
      } else if (
        ts.isClassDeclaration(s) ||
        ts.isInterfaceDeclaration(s) ||
        ts.isTypeAliasDeclaration(s) ||
        ts.isFunctionDeclaration(s) ||
        ts.isEnumDeclaration(s) ||
        ts.isModuleDeclaration(s)
      ) {
        const name = prefix + (s.name ? s.name.getText(sf) : 'default');
        // Function overloads share a key; a class and an interface merged
        // under one name are two declarations, each documented.
        check(declarations, s, name, seen, `${s.kind}:${name}`);
        if (ts.isClassDeclaration(s) || ts.isInterfaceDeclaration(s)) checkMembers(s, name);
        if (ts.isModuleDeclaration(s) && s.body && ts.isModuleBlock(s.body)) walk(s.body.statements, `${name}.`);
      }
    }
  };
  walk(sf.statements, '');
  return { declarations, members, offenders };
}

const report = (offenders, file) => offenders.map((o) => `  ${file}:${o.line} ${o.name}`).join('\n');

test('index.d.ts: every declaration and every public member has a JSDoc comment', () => {
  const { declarations, members, offenders } = checkDocs(fs.readFileSync(DTS, 'utf8'));
  // Not vacuous: the parse found the whole API.
  assert.ok(declarations.length > 100, `only ${declarations.length} declarations found`);
  assert.ok(members.length > 300, `only ${members.length} members found`);
  const names = new Set([...declarations, ...members].map((d) => d.name));
  for (const name of ['connect', 'version', 'Connection.publish', 'ConnectOptions.servers', 'KV.watch', 'NatsError.constructor']) {
    assert.ok(names.has(name), `${name} not found among the declarations`);
  }
  assert.equal(
    offenders.length,
    0,
    `${offenders.length} declaration(s) of index.d.ts without a JSDoc comment (/** ... */):\n${report(offenders, 'index.d.ts')}`,
  );
});

test('the JSDoc check reports an undocumented member, and only that', () => {
  const snippet = `
/** A widget. */
export declare class Widget {
  /** Makes one. */
  constructor(size: number);
  /** Its size. */
  readonly size: number;
  /** Draws it. */
  draw(): void;
  draw(scale: number): void;
  /** The colour. */
  get colour(): string;
  set colour(value: string);
  private secret;
  resize(size: number): void;
  /** Iterates its parts. */
  [Symbol.iterator](): Iterator<string>;
}
/** Options. */
export interface WidgetOptions {
  /** Any other option. */
  [name: string]: unknown;
}
/** Makes a widget. */
export function widget(): Widget;
export function widget(size: number): Widget;
/** Sizes. */
export type Size = number;
/** The default size. */
export const DEFAULT_SIZE: number;
/** Kinds. */
export enum Kind { A, B }
`;
  const { offenders, members } = checkDocs(snippet, 'snippet.d.ts');
  const line = snippet.split('\n').findIndex((l) => l.includes('resize(')) + 1;
  assert.deepEqual(offenders, [{ line, name: 'Widget.resize' }]);
  // The private member is not counted; the second overload and the setter are.
  assert.deepEqual(
    members.map((m) => m.name),
    [
      'Widget.constructor',
      'Widget.size',
      'Widget.draw',
      'Widget.draw',
      'Widget.colour',
      'Widget.colour',
      'Widget.resize',
      'Widget.[Symbol.iterator]',
      'WidgetOptions.[name: string]',
    ],
  );
});

test('the JSDoc check covers every kind of declaration, and only /** */ with text counts', () => {
  const snippet = `
// A line comment is not documentation.
export declare class A {
  /* Nor is a block comment. */
  constructor();
  p: number;
  m(): void;
  get g(): number;
  [k: string]: unknown;
  static s(): void;
}
/** */
export interface I {
  (x: number): string;
  new (x: number): I;
  q?: string;
}
export type T = string;
export function f(): void;
export const c: number, d: string;
export let e: number;
export enum E { X }
declare class Base {}
export namespace N {
  const inner: number;
}
`;
  const { offenders } = checkDocs(snippet, 'snippet.d.ts');
  assert.deepEqual(
    offenders.map((o) => o.name),
    [
      'A',
      'A.constructor',
      'A.p',
      'A.m',
      'A.g',
      'A.[k: string]',
      'A.static s',
      'I',
      'I.()',
      'I.new()',
      'I.q',
      'T',
      'f',
      'c',
      'd',
      'e',
      'E',
      'Base',
      'N',
      'N.inner',
    ],
  );
});

test('index.d.ts: each value it exports exists in index.js, with the class hierarchy and error codes it declares', () => {
  const natsio = require('..');
  const external = { EventEmitter: require('node:events').EventEmitter, ...require('node:stream'), Map, Error };
  const sf = ts.createSourceFile('index.d.ts', fs.readFileSync(DTS, 'utf8'), ts.ScriptTarget.Latest, true);
  const isExported = (s) => (ts.getCombinedModifierFlags(s) & ts.ModifierFlags.Export) !== 0;
  const classes = new Map(); // every declared class -> the name it extends
  const docs = new Map(); // exported class -> its JSDoc text
  const values = []; // [name, 'class' | 'function' | 'const']
  for (const s of sf.statements) {
    if (ts.isClassDeclaration(s) && s.name) {
      const ext = s.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword);
      classes.set(s.name.text, ext ? ext.types[0].expression.getText(sf) : undefined);
      if (isExported(s)) values.push([s.name.text, 'class']);
      const jsDoc = ts.getJSDocCommentsAndTags(s).filter(ts.isJSDoc);
      docs.set(s.name.text, jsDoc.map((d) => ts.getTextOfJSDocComment(d.comment) ?? '').join('\n'));
    } else if (ts.isFunctionDeclaration(s) && s.name && isExported(s)) {
      values.push([s.name.text, 'function']);
    } else if (ts.isVariableStatement(s) && isExported(s)) {
      for (const d of s.declarationList.declarations) values.push([d.name.getText(sf), 'const']);
    } else if (ts.isEnumDeclaration(s) && isExported(s)) {
      values.push([s.name.text, 'const']);
    }
  }
  assert.ok(values.length > 80, `only ${values.length} exported values found`);
  const exportedNames = new Set(values.map(([name]) => name));
  for (const [name, kind] of values) {
    assert.ok(Object.hasOwn(natsio, name), `index.d.ts declares ${name}, index.js does not export it`);
    if (kind !== 'const') assert.equal(typeof natsio[name], 'function', `${name} is a ${kind}`);
  }
  // The nearest exported ancestor, as declared (through classes declared
  // but not exported, e.g. CodedError) and at runtime.
  const declaredBase = (name) => {
    for (let base = classes.get(name); base !== undefined; base = classes.get(base)) {
      if (exportedNames.has(base)) return base;
      if (!classes.has(base)) return undefined; // external (checked below) or none
    }
    return undefined;
  };
  const runtimeBase = (cls) => {
    for (let p = Object.getPrototypeOf(cls); p && p !== Function.prototype; p = Object.getPrototypeOf(p)) {
      const name = [...exportedNames].find((n) => natsio[n] === p);
      if (name) return name;
    }
    return undefined;
  };
  for (const [name, kind] of values) {
    if (kind !== 'class') continue;
    assert.equal(declaredBase(name), runtimeBase(natsio[name]), `the exported class ${name} extends`);
    // A base from outside the package (EventEmitter, Readable, Map, ...).
    let base = classes.get(name);
    while (classes.has(base) && !exportedNames.has(base)) base = classes.get(base);
    if (base !== undefined && !exportedNames.has(base)) {
      assert.ok(external[base], `unknown base class ${base} of ${name}: add it to this test`);
      assert.ok(natsio[name].prototype instanceof external[base], `${name} extends ${base}`);
    }
    // An error class's JSDoc names the code and status it has at runtime.
    if (natsio[name].prototype instanceof natsio.NatsError) {
      const e = new natsio[name]('m');
      assert.match(docs.get(name), new RegExp(`\\(code '${e.code}', status ${e.status}\\)`), `the JSDoc of ${name}`);
    }
  }
});
