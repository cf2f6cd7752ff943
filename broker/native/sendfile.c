// sendfile(2) for Node: record bytes go from the page cache to a socket in one
// copy, as Kafka's FileRecords.writeTo does, instead of a pread into a buffer
// and a write from it (Node has no sendfile of its own). Five calls, all on
// the event loop thread:
//   dup(fd) -> fd            a descriptor of the same open file, for a region
//                            that must outlive the segment's own descriptor
//   close(fd)                closes such a descriptor
//   sendfile(out, in, pos, count) -> bytes
//                            non-blocking sendfiles until `count` bytes or a
//                            full socket buffer (EAGAIN: then fewer, maybe 0);
//                            throws on other errors and when the file ends
//                            before any byte was sent
//   send(fd, buffer, offset, more) -> bytes
//                            non-blocking send(2) of buffer[offset..] (MSG_MORE
//                            when more bytes follow, so a partition's few
//                            header bytes share a segment with its records);
//                            fewer bytes, maybe 0, when the socket is full
//   whenWritable(fd, cb)     calls cb() once the socket can take more bytes,
//                            through libuv's poll on a dup of its descriptor
//                            (the socket's own one is libuv's, registered with
//                            epoll for the socket's reads); cb(err) on failure.
//                            Returns a cancel function.
// Only bytes known to be in the page cache are sent this way (the caller
// decides, as for a pread on the event loop): a sendfile that must read the
// disk blocks the thread.
#include <node_api.h>
#include <uv.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <stdint.h>

static napi_value throw_errno(napi_env env, const char* what, int err) {
  char msg[160];
  snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));
  napi_value m, code, e;
  napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &m);
  napi_create_int32(env, err, &code);
  napi_create_error(env, NULL, m, &e);
  napi_set_named_property(env, e, "errno", code);
  napi_throw(env, e);
  return NULL;
}

static int arg_int(napi_env env, napi_value v, int64_t* out) {
  return napi_get_value_int64(env, v, out) == napi_ok;
}

static napi_value js_dup(napi_env env, napi_callback_info info) {
  size_t argc = 1; napi_value a[1]; int64_t fd;
  napi_get_cb_info(env, info, &argc, a, NULL, NULL);
  if (argc < 1 || !arg_int(env, a[0], &fd)) { napi_throw_type_error(env, NULL, "dup(fd)"); return NULL; }
  int d = dup((int)fd);
  if (d < 0) return throw_errno(env, "dup", errno);
  napi_value r; napi_create_int32(env, d, &r); return r;
}

static napi_value js_close(napi_env env, napi_callback_info info) {
  size_t argc = 1; napi_value a[1]; int64_t fd;
  napi_get_cb_info(env, info, &argc, a, NULL, NULL);
  if (argc < 1 || !arg_int(env, a[0], &fd)) { napi_throw_type_error(env, NULL, "close(fd)"); return NULL; }
  if (close((int)fd) < 0 && errno != EINTR) return throw_errno(env, "close", errno);
  return NULL;
}

static napi_value js_sendfile(napi_env env, napi_callback_info info) {
  size_t argc = 4; napi_value a[4]; int64_t out, in, pos, count;
  napi_get_cb_info(env, info, &argc, a, NULL, NULL);
  if (argc < 4 || !arg_int(env, a[0], &out) || !arg_int(env, a[1], &in) || !arg_int(env, a[2], &pos) || !arg_int(env, a[3], &count) || pos < 0 || count < 0) {
    napi_throw_type_error(env, NULL, "sendfile(outFd, inFd, position, count)");
    return NULL;
  }
  off_t off = (off_t)pos;
  int64_t sent = 0;
  while (sent < count) {
    int64_t want = count - sent;
    ssize_t n = sendfile((int)out, (int)in, &off, want > 0x7ffff000 ? 0x7ffff000 : (size_t)want);
    if (n > 0) { sent += n; continue; }
    if (n == 0) {
      // The file ends before `count`: it was cut under the read.
      if (sent == 0) return throw_errno(env, "sendfile: file ended before the region", ENODATA);
      break;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    return throw_errno(env, "sendfile", errno);
  }
  napi_value r; napi_create_double(env, (double)sent, &r); return r;
}

static napi_value js_send(napi_env env, napi_callback_info info) {
  size_t argc = 4; napi_value a[4]; int64_t fd, offset; bool more = false;
  napi_get_cb_info(env, info, &argc, a, NULL, NULL);
  void* data; size_t length;
  if (argc < 4 || !arg_int(env, a[0], &fd) || napi_get_buffer_info(env, a[1], &data, &length) != napi_ok || !arg_int(env, a[2], &offset) ||
      napi_get_value_bool(env, a[3], &more) != napi_ok || offset < 0 || (size_t)offset > length) {
    napi_throw_type_error(env, NULL, "send(fd, buffer, offset, more)");
    return NULL;
  }
  size_t sent = (size_t)offset;
  while (sent < length) {
    ssize_t n = send((int)fd, (char*)data + sent, length - sent, MSG_DONTWAIT | MSG_NOSIGNAL | (more ? MSG_MORE : 0));
    if (n > 0) { sent += (size_t)n; continue; }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    return throw_errno(env, "send", n < 0 ? errno : EPIPE);
  }
  napi_value r; napi_create_double(env, (double)(sent - (size_t)offset), &r); return r;
}

typedef struct waiter waiter_t;

/** What the cancel function holds: shared with its waiter, freed when both have let go. */
typedef struct {
  waiter_t* w;
  int refs;
} token_t;

struct waiter {
  uv_poll_t poll;
  napi_env env;
  napi_ref cb;
  napi_async_context actx;
  token_t* token;
  int fd;
  int done;
};

static void token_release(token_t* t) {
  if (--t->refs == 0) free(t);
}

static void waiter_closed(uv_handle_t* h) {
  waiter_t* w = (waiter_t*)h->data;
  close(w->fd);
  w->token->w = NULL;
  token_release(w->token);
  free(w);
}

static void token_finalize(napi_env env, void* data, void* hint) {
  (void)env; (void)hint;
  token_release((token_t*)data);
}

/** Stops polling and calls the callback once: with no argument, or an error for a failed poll. */
static void waiter_finish(waiter_t* w, int status, int call) {
  if (w->done) return;
  w->done = 1;
  uv_poll_stop(&w->poll);
  napi_env env = w->env;
  if (call) {
    napi_handle_scope scope;
    napi_open_handle_scope(env, &scope);
    napi_value cb, recv, argv[1];
    napi_get_reference_value(env, w->cb, &cb);
    napi_get_global(env, &recv);
    size_t argc = 0;
    if (status < 0) {
      napi_value m;
      napi_create_string_utf8(env, uv_strerror(status), NAPI_AUTO_LENGTH, &m);
      napi_create_error(env, NULL, m, &argv[0]);
      argc = 1;
    }
    napi_value result;
    napi_make_callback(env, w->actx, recv, cb, argc, argv, &result);
    napi_close_handle_scope(env, scope);
  }
  napi_delete_reference(env, w->cb);
  napi_async_destroy(env, w->actx);
  uv_close((uv_handle_t*)&w->poll, waiter_closed);
}

static void on_poll(uv_poll_t* h, int status, int events) {
  (void)events;
  waiter_finish((waiter_t*)h->data, status, 1);
}

static napi_value js_cancel(napi_env env, napi_callback_info info) {
  void* data;
  napi_get_cb_info(env, info, NULL, NULL, NULL, &data);
  // The function may outlive its waiter: the token then no longer points at it.
  waiter_t* w = ((token_t*)data)->w;
  if (w != NULL && !w->done) waiter_finish(w, 0, 0);
  return NULL;
}

static napi_value js_when_writable(napi_env env, napi_callback_info info) {
  size_t argc = 2; napi_value a[2]; int64_t fd;
  napi_get_cb_info(env, info, &argc, a, NULL, NULL);
  napi_valuetype t;
  if (argc < 2 || !arg_int(env, a[0], &fd) || napi_typeof(env, a[1], &t) != napi_ok || t != napi_function) {
    napi_throw_type_error(env, NULL, "whenWritable(fd, callback)");
    return NULL;
  }
  uv_loop_t* loop;
  napi_get_uv_event_loop(env, &loop);
  int d = dup((int)fd);
  if (d < 0) return throw_errno(env, "dup", errno);
  waiter_t* w = calloc(1, sizeof *w);
  token_t* token = calloc(1, sizeof *token);
  if (w == NULL || token == NULL) { free(w); free(token); close(d); return throw_errno(env, "whenWritable", ENOMEM); }
  token->w = w;
  token->refs = 1;
  w->token = token;
  w->env = env;
  w->fd = d;
  w->poll.data = w;
  int rc = uv_poll_init(loop, &w->poll, d);
  if (rc != 0) { close(d); free(w); free(token); return throw_errno(env, "uv_poll_init", -rc); }
  napi_value name, resource;
  napi_create_string_utf8(env, "sediment.whenWritable", NAPI_AUTO_LENGTH, &name);
  napi_create_object(env, &resource);
  napi_async_init(env, resource, name, &w->actx);
  napi_create_reference(env, a[1], 1, &w->cb);
  rc = uv_poll_start(&w->poll, UV_WRITABLE, on_poll);
  if (rc != 0) {
    w->done = 1;
    napi_delete_reference(env, w->cb);
    napi_async_destroy(env, w->actx);
    uv_close((uv_handle_t*)&w->poll, waiter_closed);
    return throw_errno(env, "uv_poll_start", -rc);
  }
  napi_value cancel;
  napi_create_function(env, "cancel", NAPI_AUTO_LENGTH, js_cancel, token, &cancel);
  token->refs++;
  napi_add_finalizer(env, cancel, token, token_finalize, NULL, NULL);
  return cancel;
}

NAPI_MODULE_INIT() {
  napi_value f;
  napi_create_function(env, "dup", NAPI_AUTO_LENGTH, js_dup, NULL, &f);
  napi_set_named_property(env, exports, "dup", f);
  napi_create_function(env, "close", NAPI_AUTO_LENGTH, js_close, NULL, &f);
  napi_set_named_property(env, exports, "close", f);
  napi_create_function(env, "sendfile", NAPI_AUTO_LENGTH, js_sendfile, NULL, &f);
  napi_set_named_property(env, exports, "sendfile", f);
  napi_create_function(env, "send", NAPI_AUTO_LENGTH, js_send, NULL, &f);
  napi_set_named_property(env, exports, "send", f);
  napi_create_function(env, "whenWritable", NAPI_AUTO_LENGTH, js_when_writable, NULL, &f);
  napi_set_named_property(env, exports, "whenWritable", f);
  return exports;
}
