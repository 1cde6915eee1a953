// The public library API: re-exports only (DESIGN.md, "Public library API").

// Time
export type { Clock } from './util/clock.js';
export { FakeClock, realClock } from './util/clock.js';

// Kubernetes API shapes, defaulting, validation, manifests
export type {
  Container,
  ContainerStatus,
  Event,
  Pod,
  PodCondition,
  PodStatus,
  Probe,
} from './api/types.js';
export {
  DEFAULT_PROBE_FAILURE_THRESHOLD,
  DEFAULT_PROBE_PERIOD_SECONDS,
  DEFAULT_PROBE_SUCCESS_THRESHOLD,
  DEFAULT_PROBE_TIMEOUT_SECONDS,
  DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS,
  setPodDefaults,
  setProbeDefaults,
} from './api/defaults.js';
export { FieldError, type FieldErrorType } from './api/field-error.js';
export { validatePod, validateProbe, type PodValidationOptions } from './api/validation.js';
export {
  admitPods,
  loadManifestFile,
  ManifestError,
  parseManifest,
  type AdmitResult,
  podsOf,
  type ManifestOptions,
  type ManifestPod,
  type RejectedPod,
} from './api/manifest.js';
export {
  formatFieldPath,
  formatProblem,
  loadManifests,
  parseManifestDocuments,
  skippedNote,
  type FieldPath,
  type LoadOptions,
  type ManifestLoad,
  type ManifestObject,
  type ManifestProblem,
  type ManifestSkip,
  type ObjectSink,
  type SourcePosition,
} from './api/documents.js';
export { POD_TEMPLATE_KINDS, WORKLOAD_KINDS, podTemplateHash, type PodNaming } from './api/workloads.js';

// One-shot handlers
export type { CommandRunner, Outcome, ProbeOutcome } from './probe/types.js';
export { PROBE_USER_AGENT, MAX_PROBE_OUTPUT_BYTES } from './probe/constants.js';
export { findPortByName, resolveContainerPort } from './probe/port.js';
export {
  newHttpProbeRequest,
  newHttpProbeRequestForURL,
  type HttpProbeRequest,
} from './probe/http-request.js';
export { probeHttp, type HttpProbeOptions } from './probe/http.js';
export { probeTcp } from './probe/tcp.js';
export { probeGrpc } from './probe/grpc.js';
export { ExecTimeoutError, expandCommandOnlyStatic, probeExec } from './probe/exec.js';
export { LocalCommandRunner, type LocalCommandRunnerOptions } from './probe/local-runner.js';

// The probe engine
export type { EventRecorder, EventRef, PodStatusProvider, ProbeType, Result, ResultUpdate } from './prober/types.js';
export {
  MAX_PROBE_RETRIES,
  Prober,
  type ProbeDetails,
  type ProbeHandlers,
  type ProbeTarget,
  type ProberOptions,
  type ProbeVerdict,
} from './prober/prober.js';
export { ResultsManager } from './prober/results.js';
export { ProbeWorker } from './prober/worker.js';
export { ProbeManager, type ProbeManagerOptions } from './prober/manager.js';

// The kubelet's side: status, conditions, events, back-off, the local kubelet
export { StatusManager, type StatusManagerOptions } from './kubelet/status-manager.js';
export {
  generateContainersReadyCondition,
  generatePodConditions,
  generatePodInitializedCondition,
  generatePodReadyCondition,
} from './kubelet/conditions.js';
export {
  createEventRecorder,
  formatEvent,
  type EventFilter,
  type EventRecorderOptions,
  type InMemoryEventRecorder,
} from './kubelet/events.js';
export { CrashLoopBackOff, crashLoopBackOffKey } from './kubelet/backoff.js';
export { Kubelet, killGracePeriodSeconds, type KubeletOptions } from './kubelet/kubelet.js';
export type { ContainerRuntime, ContainerEvent, ExecResult, PodSandbox, RuntimeContainerStatus } from './runtime/types.js';
export { createProcessRuntime, type ProcessRuntimeOptions } from './runtime/process-runtime.js';

// The read-only HTTP API
export { startServer, type RunningServer, type ServerOptions } from './server/server.js';
export type { KubeletView } from './server/view.js';

// Flight recorder and dashboard (issue #11)
export {
  DEFAULT_FLIGHT_RECORDER_CAPACITY,
  FlightRecorder,
  ProbeRing,
  type FlightRecorderOptions,
  type HistoryFilter,
  type ProbeAttemptRecord,
  type ProbeHandlerKind,
  type ProbeHistory,
  type ProbeRingInfo,
  type ProbeTransitionRecord,
  type RecorderEntry,
} from './prober/recorder.js';
export type { ProbeNote } from './prober/prober.js';
export type { HandlerObservation, NetProbeOptions, ProbeClose } from './probe/types.js';
export type { KubeletChange } from './kubelet/kubelet.js';
export { timelineView, type Timeline } from './server/timeline.js';
export type { ProbeQuery, ViewChange } from './server/view.js';
// The CRI runtime (containerd, CRI-O) and the kubelet's image step
export { createCriRuntime, DEFAULT_CRI_ENDPOINT, type CriRuntime, type CriRuntimeOptions } from './runtime/cri/cri-runtime.js';
export type { ImageInfo } from './runtime/types.js';
export { ERR_IMAGE_NEVER_PULL, ERR_IMAGE_PULL, IMAGE_PULL_BACK_OFF, shouldPullImage } from './kubelet/images.js';
// probelet check: static probe lint (the lint helper's part; budgets are exported by their own block)
export { checkManifests, createChecker, IGNORE_ANNOTATION, type CheckResult, type CheckRunOptions } from './check/run.js';
export { rules as checkRules, ruleInfos as checkRuleInfos, type RuleInfo } from './check/rules/index.js';
export { toJson as formatCheckJson, toSarif as formatCheckSarif, toText as formatCheckText } from './check/output.js';
export type { CheckOptions, ContainerContext, ContainerRole, Finding, ObjectRef, Rule, RuleFinding, Severity } from './check/types.js';
export { computeBudget, backOffAfterRestarts, formatBudgetTable } from './check/budgets.js';
export { timingRules } from './check/rules/timing.js';

// The simulator (`probelet simulate`): the real kubelet on virtual time
export { IGNORE_SIGTERM, type Behaviours, type ContainerBehaviour, type SigtermBehaviour } from './simulate/behaviour.js';
export { simulatedHandlers } from './simulate/handlers.js';
export { admitForSimulation } from './simulate/pods.js';
export { SimRuntime, type SimRuntimeOptions } from './simulate/runtime.js';
export { formatScript, parseScript, ScriptError, type Phase, type PhaseState, type Script } from './simulate/script.js';
export {
  simulate,
  startSimulation,
  type ContainerOutcome,
  type Kill,
  type PodOutcome,
  type RunningSimulation,
  type SimulationOptions,
  type SimulationResult,
} from './simulate/simulation.js';
