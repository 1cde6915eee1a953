/** Behaviours from a pod annotation (`probelet node --runtime simulated`). */
import { describe, expect, it } from 'vitest';
import { parseBehaviourAnnotation } from '../../src/simulate/annotation.js';
import { formatScript } from '../../src/simulate/script.js';

describe('parseBehaviourAnnotation', () => {
  it('reads CONTAINER[.PROBE]=SCRIPT assignments separated by spaces, semicolons or new lines', () => {
    const b = parseBehaviourAnnotation('app=up:1m,down;\n app.readiness=down  sidecar.liveness=fail:10s,up', ['app', 'sidecar']);
    expect(formatScript(b.get('app')!.script!)).toBe('up:1m0s,down');
    expect(formatScript(b.get('app')!.probes.readiness!)).toBe('down');
    expect(formatScript(b.get('sidecar')!.probes.liveness!)).toBe('fail:10s,up');
  });

  it('names the bad assignment and the fix', () => {
    expect(() => parseBehaviourAnnotation('app', ['app'])).toThrow('"app": expected CONTAINER[.PROBE]=SCRIPT, e.g. app=down:30s,up or app.readiness=down');
    expect(() => parseBehaviourAnnotation('web=down', ['app'])).toThrow('"web=down": no container "web" in the pod (containers: app)');
    expect(() => parseBehaviourAnnotation('app.ready=down', ['app'])).toThrow('"app.ready=down": the probe must be one of liveness, readiness, startup');
    expect(() => parseBehaviourAnnotation('app=down,up', ['app'])).toThrow(/^"app=down,up": phase "down" needs a duration/);
  });
});
