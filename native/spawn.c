/*
 * probelet's spawn primitive: posix_spawn(3) in a session of its own, stdin /dev/null,
 * stdout and stderr on pipes, exit watched through a pidfd on the event loop.
 *
 * Why: Node's child_process.spawn forks the calling process (cost grows with its memory)
 * and waits for the exec on the event loop. glibc's posix_spawn uses
 * clone(CLONE_VM | CLONE_VFORK): nothing is copied, and the caller is blocked only until
 * the child has exec'd. Everything else about a process (groups, tree kill, output caps,
 * timeouts) stays in src/spawn/process.ts; this file only starts a process and reports
 * its end.
 *
 * spawn(file, argv, env, cwd, onStart, onExit[, cgroupProcs])
 *   file: run as given when it holds a '/', else looked up in env's PATH (execvp's rules).
 *   cgroupProcs: null, or a cgroup's `cgroup.procs` (src/spawn/cgroup.ts): the child joins
 *   that cgroup itself before its exec, so nothing it forks can be outside it. posix_spawn
 *   cannot do that (glibc 2.36 has no posix_spawnattr_setcgroup_np), and a move by the
 *   parent after posix_spawn returns loses the race to a shell that forks at once on a
 *   busy machine; so with a cgroup the start is vfork(2) and the same steps posix_spawn's
 *   child takes, done by hand (spawn_into_cgroup below).
 *   env:  array of "KEY=value", or null for this process's environment; cwd: string or null.
 *   onStart(0, pid, stdoutFd, stderrFd) once started (the fds are the parent's non-blocking
 *   pipe ends, for JS to own), or onStart(-errno) when it could not start: posix_spawn
 *   reports the exec's errno (ENOENT, EACCES, E2BIG...), or chdir's for a bad cwd.
 *   onExit(code, signal): once, after the child was reaped (signal 0 when it exited).
 * supported(): false where pidfds cannot watch a child (see below); then do not use spawn.
 * The start runs on a libuv pool thread, so the event loop never waits for an exec.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <node_api.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

typedef struct watch {
  uv_poll_t poll;
  napi_env env;
  napi_ref callback;
  napi_async_context context;
  int pidfd;
  pid_t pid;
  struct watch *prev, *next;
} watch_t;

/* Watches still open, closed by the env cleanup hook (a worker thread's loop must close empty). */
static watch_t *watches = NULL;

static int pidfd_open_(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

static void unlink_watch(watch_t *w) {
  if (w->prev) w->prev->next = w->next; else watches = w->next;
  if (w->next) w->next->prev = w->prev;
  w->prev = w->next = NULL;
}

static void free_watch(uv_handle_t *handle) {
  watch_t *w = (watch_t *)handle->data;
  close(w->pidfd);
  free(w);
}

static void on_readable(uv_poll_t *poll, int status, int events) {
  (void)status;
  (void)events;
  watch_t *w = (watch_t *)poll->data;
  siginfo_t info;
  memset(&info, 0, sizeof info);
  int code = 0, sig = 0;
  if (waitid((idtype_t)P_PIDFD, (id_t)w->pidfd, &info, WEXITED | WNOHANG) == 0) {
    if (info.si_pid == 0) return; /* not exited yet */
    if (info.si_code == CLD_EXITED) code = info.si_status;
    else sig = info.si_status; /* CLD_KILLED, CLD_DUMPED */
  } else if (errno == EINTR) {
    return; /* the poll fires again */
  } else if (errno == ECHILD) {
    /* Reaped by someone else in this process (a waitpid(-1)): the status is lost. Report a
       kill, never a success that did not happen. */
    sig = SIGKILL;
  } else {
    /* waitid(P_PIDFD) refused (EINVAL before Linux 5.4, a seccomp filter): the pidfd being
       readable says the child exited, so waitpid reaps it at once. Returning here instead
       would leave the poll firing for ever and the exit never reported. */
    int status = 0;
    pid_t reaped = waitpid(w->pid, &status, WNOHANG);
    if (reaped == 0) return;
    if (reaped == w->pid && WIFEXITED(status)) code = WEXITSTATUS(status);
    else if (reaped == w->pid && WIFSIGNALED(status)) sig = WTERMSIG(status);
    else sig = SIGKILL;
  }
  uv_poll_stop(poll);
  unlink_watch(w);
  napi_env env = w->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value callback, global, argv[2], result;
  napi_get_reference_value(env, w->callback, &callback);
  napi_get_global(env, &global);
  napi_create_int32(env, code, &argv[0]);
  napi_create_int32(env, sig, &argv[1]);
  napi_make_callback(env, w->context, global, callback, 2, argv, &result);
  napi_delete_reference(env, w->callback);
  napi_async_destroy(env, w->context);
  napi_close_handle_scope(env, scope);
  uv_close((uv_handle_t *)poll, free_watch);
}

static void cleanup(void *arg) {
  (void)arg;
  while (watches) {
    watch_t *w = watches;
    unlink_watch(w);
    uv_poll_stop(&w->poll);
    uv_close((uv_handle_t *)&w->poll, free_watch);
  }
}

static char *get_string(napi_env env, napi_value value) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &len) != napi_ok) return NULL;
  char *s = malloc(len + 1);
  if (s) napi_get_value_string_utf8(env, value, s, len + 1, &len);
  return s;
}

/* A NULL-terminated copy of a JS string array; NULL for null/undefined. */
static char **get_strings(napi_env env, napi_value value, int *failed) {
  napi_valuetype type;
  napi_typeof(env, value, &type);
  if (type == napi_null || type == napi_undefined) return NULL;
  uint32_t n = 0;
  if (napi_get_array_length(env, value, &n) != napi_ok) { *failed = 1; return NULL; }
  char **out = calloc(n + 1, sizeof(char *));
  if (!out) { *failed = 1; return NULL; }
  for (uint32_t i = 0; i < n; i++) {
    napi_value item;
    napi_get_element(env, value, i, &item);
    out[i] = get_string(env, item);
    if (!out[i]) { *failed = 1; break; }
  }
  return out;
}

static void free_strings(char **list) {
  if (!list) return;
  for (char **p = list; *p; p++) free(*p);
  free(list);
}

/* execvp's search: the first PATH entry holding an executable regular file. */
static int lookup(const char *file, char **envp, const char *cwd, char *out, size_t size) {
  const char *path = "/usr/bin:/bin";
  for (char **e = envp ? envp : environ; e && *e; e++) {
    if (strncmp(*e, "PATH=", 5) == 0) { path = *e + 5; break; }
  }
  int err = ENOENT;
  for (const char *p = path;; ) {
    const char *end = strchr(p, ':');
    size_t dirlen = end ? (size_t)(end - p) : strlen(p);
    int n = dirlen == 0 ? snprintf(out, size, "%s", file) : snprintf(out, size, "%.*s/%s", (int)dirlen, p, file);
    if (n > 0 && (size_t)n < size) {
      /* A relative entry is relative to the child's directory, where the exec happens. */
      char probe[PATH_MAX * 2];
      const char *check = out;
      if (out[0] != '/' && cwd) { snprintf(probe, sizeof probe, "%s/%s", cwd, out); check = probe; }
      struct stat st;
      if (stat(check, &st) == 0 && S_ISREG(st.st_mode)) {
        if (access(check, X_OK) == 0) return 0;
        err = EACCES;
      }
    }
    if (!end) break;
    p = end + 1;
  }
  return err;
}

/* One start: inputs copied on the JS thread, the start itself on a libuv pool thread. */
typedef struct job {
  napi_async_work work;
  napi_ref on_start, on_exit;
  char *file, *cwd, *cgroup_procs;
  char **argv, **envp;
  int err;
  pid_t pid;
  int pidfd, out, errfd;
} job_t;

static void free_job(napi_env env, job_t *job) {
  if (job->on_start) napi_delete_reference(env, job->on_start);
  if (job->on_exit) napi_delete_reference(env, job->on_exit);
  free(job->file);
  free(job->cwd);
  free(job->cgroup_procs);
  free_strings(job->argv);
  free_strings(job->envp);
  free(job);
}

/*
 * posix_spawn's child, by hand, with one step first: join the cgroup (writing "0" to
 * cgroup.procs moves the writer). vfork: the child borrows this thread's memory and stack
 * until its exec, this thread waits meanwhile (the event loop does not), and the child
 * makes only system calls. Pool threads block every signal, so no handler of ours can run
 * in the child; it resets every disposition (only ignored ones would survive the exec) and
 * unblocks them just before the exec. An error of the child's reaches the parent through
 * the shared `child_err`. Returns 0 with *pid set, or an errno.
 */
static int spawn_into_cgroup(const char *path, char **argv, char **envp, const char *cwd, const char *procs,
                             int out_w, int err_w, pid_t *pid) {
  int cg = open(procs, O_WRONLY | O_CLOEXEC);
  if (cg < 0) return errno;
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0) { int e = errno; close(cg); return e; }
  volatile int child_err = 0;
  pid_t child = vfork();
  if (child == 0) {
    /* A cgroup removed meanwhile: the command still runs, outside (JS's join tries again). */
    ssize_t joined = write(cg, "0", 1);
    (void)joined;
    setsid();
    if (dup2(devnull, 0) < 0 || dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0) { child_err = errno; _exit(127); }
    if (cwd && chdir(cwd) != 0) { child_err = errno; _exit(127); }
#ifdef SYS_close_range
    syscall(SYS_close_range, 3, ~0U, 0);
#endif
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++) sigaction(sig, &dfl, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(path, argv, envp);
    child_err = errno;
    _exit(127);
  }
  int err = child < 0 ? errno : child_err;
  close(cg);
  close(devnull);
  if (child > 0 && err) waitpid(child, NULL, 0);
  if (!err) *pid = child;
  return err;
}

/*
 * On a pool thread: with CLONE_VFORK only this thread waits for the child's exec, never
 * the event loop (an exec can take milliseconds on a busy machine).
 */
static void execute(napi_env env, void *data) {
  (void)env;
  job_t *job = (job_t *)data;
  int out[2] = {-1, -1}, errp[2] = {-1, -1};
  char resolved[PATH_MAX];
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  int have_actions = 0, have_attr = 0, err = 0;
  const char *path = job->file;
  job->pidfd = -1;
  if (!strchr(job->file, '/')) {
    err = lookup(job->file, job->envp, job->cwd, resolved, sizeof resolved);
    if (err) goto done;
    path = resolved;
  }
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0) { err = errno; goto done; }
  if (job->cgroup_procs) {
    err = spawn_into_cgroup(path, job->argv, job->envp ? job->envp : environ, job->cwd, job->cgroup_procs, out[1], errp[1], &job->pid);
    if (err) goto done;
    goto started;
  }
  if ((err = posix_spawn_file_actions_init(&actions))) goto done;
  have_actions = 1;
  if ((err = posix_spawnattr_init(&attr))) goto done;
  have_attr = 1;
  if ((err = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)) ||
      (err = posix_spawn_file_actions_adddup2(&actions, out[1], 1)) ||
      (err = posix_spawn_file_actions_adddup2(&actions, errp[1], 2)))
    goto done;
  if (job->cwd && (err = posix_spawn_file_actions_addchdir_np(&actions, job->cwd))) goto done;
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 34)
  /* Nothing of ours but the three descriptors above: a descriptor some library opened
     without O_CLOEXEC must not reach a probe's command. */
  if ((err = posix_spawn_file_actions_addclosefrom_np(&actions, 3))) goto done;
#endif
  /* A session (and process group) of its own; Node ignores SIGPIPE and pool threads block
     every signal: the child gets every signal back at its default and an empty mask. */
  sigset_t all, none;
  /* Every bit, not sigfillset: that leaves out glibc's internal signals (32, 33), which the
     child would otherwise start with ignored, where Node's spawn leaves them at default. */
  memset(&all, 0xff, sizeof all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  if ((err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)))
    goto done;
  if ((err = posix_spawn(&job->pid, path, &actions, &attr, job->argv, job->envp ? job->envp : environ))) goto done;
started:
  /* Our unreaped child: its pidfd is valid even if it already exited. */
  job->pidfd = pidfd_open_(job->pid);
  if (job->pidfd < 0) {
    /* Cannot watch it: do not leave it running unseen. */
    err = errno;
    kill(job->pid, SIGKILL);
    waitpid(job->pid, NULL, 0);
    goto done;
  }
  fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
  fcntl(errp[0], F_SETFL, fcntl(errp[0], F_GETFL) | O_NONBLOCK);
  job->out = out[0];
  job->errfd = errp[0];
  out[0] = errp[0] = -1;
done:
  if (have_actions) posix_spawn_file_actions_destroy(&actions);
  if (have_attr) posix_spawnattr_destroy(&attr);
  for (int i = 0; i < 2; i++) {
    if (out[i] >= 0) close(out[i]);
    if (errp[i] >= 0) close(errp[i]);
  }
  job->err = err;
}

/* Back on the JS thread: watch the exit, then onStart(0, pid, stdoutFd, stderrFd) or onStart(-errno). */
static void complete(napi_env env, napi_status status, void *data) {
  job_t *job = (job_t *)data;
  if (status != napi_ok && !job->err) job->err = ECANCELED;
  watch_t *w = NULL;
  if (!job->err) {
    uv_loop_t *loop = NULL;
    napi_get_uv_event_loop(env, &loop);
    w = calloc(1, sizeof *w);
    if (!w || !loop || uv_poll_init(loop, &w->poll, job->pidfd) != 0) {
      job->err = ENOMEM;
      kill(job->pid, SIGKILL);
      waitpid(job->pid, NULL, 0);
      close(job->pidfd);
      close(job->out);
      close(job->errfd);
      free(w);
      w = NULL;
    }
  }
  if (w) {
    w->env = env;
    w->pidfd = job->pidfd;
    w->pid = job->pid;
    w->poll.data = w;
    w->callback = job->on_exit;
    job->on_exit = NULL;
    napi_value name;
    napi_create_string_utf8(env, "probelet:spawn", NAPI_AUTO_LENGTH, &name);
    napi_async_init(env, NULL, name, &w->context);
    w->next = watches;
    if (watches) watches->prev = w;
    watches = w;
    uv_poll_start(&w->poll, UV_READABLE, on_readable);
  }
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value callback, global, argv[4], result;
  napi_get_reference_value(env, job->on_start, &callback);
  napi_get_global(env, &global);
  napi_create_int32(env, -job->err, &argv[0]);
  napi_create_int32(env, job->err ? 0 : job->pid, &argv[1]);
  napi_create_int32(env, job->err ? -1 : job->out, &argv[2]);
  napi_create_int32(env, job->err ? -1 : job->errfd, &argv[3]);
  napi_call_function(env, global, callback, 4, argv, &result);
  napi_close_handle_scope(env, scope);
  napi_delete_async_work(env, job->work);
  free_job(env, job);
}

static napi_value throw_error(napi_env env, const char *message) {
  napi_throw_error(env, NULL, message);
  return NULL;
}

static napi_value spawn(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value args[7];
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  if (argc < 6) return throw_error(env, "spawn(file, argv, env, cwd, onStart, onExit[, cgroupProcs])");
  job_t *job = calloc(1, sizeof *job);
  if (!job) return throw_error(env, "spawn: out of memory");
  int failed = 0;
  job->file = get_string(env, args[0]);
  job->argv = get_strings(env, args[1], &failed);
  job->envp = get_strings(env, args[2], &failed);
  napi_valuetype cwd_type;
  napi_typeof(env, args[3], &cwd_type);
  job->cwd = cwd_type == napi_string ? get_string(env, args[3]) : NULL;
  napi_valuetype cgroup_type = napi_undefined;
  if (argc > 6) napi_typeof(env, args[6], &cgroup_type);
  job->cgroup_procs = cgroup_type == napi_string ? get_string(env, args[6]) : NULL;
  napi_create_reference(env, args[4], 1, &job->on_start);
  napi_create_reference(env, args[5], 1, &job->on_exit);
  if (!job->file || !job->argv || failed) {
    free_job(env, job);
    return throw_error(env, "spawn: bad arguments");
  }
  napi_value name;
  napi_create_string_utf8(env, "probelet:spawn", NAPI_AUTO_LENGTH, &name);
  if (napi_create_async_work(env, NULL, name, execute, complete, job, &job->work) != napi_ok ||
      napi_queue_async_work(env, job->work) != napi_ok) {
    free_job(env, job);
    return throw_error(env, "spawn: cannot queue");
  }
  return NULL;
}

/*
 * supported(): whether this kernel (and any seccomp filter) lets us watch a child: a pidfd
 * of our own process, and waitid(P_PIDFD) on it answering ECHILD (we are not our own child)
 * rather than EINVAL (Linux 5.3) or ENOSYS/EPERM. When it says false, Node's spawn serves.
 */
static napi_value supported(napi_env env, napi_callback_info info) {
  (void)info;
  int ok = 0;
  int fd = pidfd_open_(getpid());
  if (fd >= 0) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid((idtype_t)P_PIDFD, (id_t)fd, &si, WEXITED | WNOHANG) != 0 && errno == ECHILD) ok = 1;
    close(fd);
  }
  napi_value result;
  napi_get_boolean(env, ok, &result);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "spawn", NAPI_AUTO_LENGTH, spawn, NULL, &fn);
  napi_set_named_property(env, exports, "spawn", fn);
  napi_create_function(env, "supported", NAPI_AUTO_LENGTH, supported, NULL, &fn);
  napi_set_named_property(env, exports, "supported", fn);
  napi_add_env_cleanup_hook(env, cleanup, NULL);
  return exports;
}
