/**
 * gRPC status errors worded as Go prints them, since the kubelet's messages (probe failures,
 * CRI errors in events) do: `rpc error: code = NotFound desc = …`.
 */

/** Go's `codes.Code.String()`, because the kubelet prints gRPC status errors the Go way. */
const GO_CODE_NAMES: readonly string[] = [
  'OK',
  'Canceled',
  'Unknown',
  'InvalidArgument',
  'DeadlineExceeded',
  'NotFound',
  'AlreadyExists',
  'PermissionDenied',
  'ResourceExhausted',
  'FailedPrecondition',
  'Aborted',
  'OutOfRange',
  'Unimplemented',
  'Internal',
  'Unavailable',
  'DataLoss',
  'Unauthenticated',
];

/** Go's `status.Error(...).Error()`: `rpc error: code = NotFound desc = ...`. */
export function goStatusErrorText(code: number, details: string): string {
  const name = GO_CODE_NAMES[code] ?? `Code(${code})`;
  return `rpc error: code = ${name} desc = ${details}`;
}
