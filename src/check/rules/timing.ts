/** STUB (lint branch): the budgets helper owns this file; the integrator takes the budgets branch's real `timing.ts` on merge. */
import type { Rule } from '../types.js';

export const timingRules: Rule[] = [];
