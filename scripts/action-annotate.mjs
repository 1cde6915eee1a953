#!/usr/bin/env node
// Turns `probelet check -o json` into GitHub workflow commands (::error file=…,line=…::…), so
// findings, input problems and input notes (a suppression that suppresses nothing) annotate
// the pull request's diff. Used by action.yml.
import { readFileSync } from 'node:fs';

const LEVEL = { error: 'error', warning: 'warning', info: 'notice' };
/** Workflow-command escaping: properties also escape `:` and `,`. */
const data = (s) => String(s).replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const prop = (s) => data(s).replace(/:/g, '%3A').replace(/,/g, '%2C');

const out = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const lines = [];
for (const f of out.findings ?? []) {
  const file = f.template ?? f.file;
  const where = f.template ? `file=${prop(file)}` : `file=${prop(file)},line=${f.line},col=${f.column}`;
  lines.push(`::${LEVEL[f.severity] ?? 'notice'} ${where},title=${prop(`probelet ${f.rule}`)}::${data(f.message)}`);
}
for (const p of out.problems ?? []) {
  const where = [`file=${prop(p.file)}`, ...(p.line !== null ? [`line=${p.line}`] : []), ...(p.column !== null ? [`col=${p.column}`] : [])].join(',');
  lines.push(`::error ${where},title=probelet input problem::${data(p.field ? `${p.field}: ${p.message}` : p.message)}`);
}
for (const n of out.notes ?? []) {
  const where = n.template ? `file=${prop(n.template)}` : `file=${prop(n.file)},line=${n.line},col=${n.column}`;
  lines.push(`::warning ${where},title=probelet input note::${data(`${n.field}: ${n.message}`)}`);
}
if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
