/*
 * Portico's variables module: the variables nginx.conf derives from other variables on every proxied request,
 * computed in one step instead of by a `map` each. A map evaluates its key and its value as complex values (the
 * script engine: a length pass, an allocation, a copy), lower-cases the key into another buffer and hashes it:
 * about 500 instructions per map per request, nine maps per proxied request (e2e/bench/dataplane-cg.ts). The
 * forms here read their operands by index, already evaluated, and allocate only what they build.
 *
 *   portico_coalesce $result <operand> <operand>...;
 *       $result is the first operand that is not empty ("" if all are).
 *   portico_if $result <test> <then> [<else>];
 *       $result is <then> when the operand <test> is not empty, else <else> ("" without it).
 *   portico_hop $hop $loop <operand> <id>;
 *       Loop detection (X-Portico-Hop): $hop is the operand (the incoming header) with <id> appended (", <id>", or
 *       <id> alone when the header is empty); $loop is "1" when <id> is already one of the header's entries
 *       (delimited by the start or end of the header, a space or a comma), else "".
 *   portico_request_id $result;
 *       A request id (generate-request-id, X-Request-ID): 32 lower-case hex characters, 64 random bits drawn once per
 *       worker from /dev/urandom, then the worker's request counter. Unique across workers, replicas and restarts;
 *       not secret. Made only when read (a request that brought its own X-Request-ID makes none); nginx's $request_id
 *       would draw 16 random bytes per request from OpenSSL (6,600 instructions, e2e/bench/log-cost.ts).
 *   portico_access_line $result;
 *       ingress-nginx's default access-log line (log-format-upstream unset), byte for byte as nginx's log module
 *       writes that format with its default escaping, for `log_format ... escape=none '$result'`:
 *         $remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer"
 *         "$http_user_agent" $request_length $request_time [$proxy_upstream_name] [$proxy_alternative_upstream_name]
 *         $upstream_addr $upstream_response_length $upstream_response_time $upstream_status $req_id
 *       nginx's log module makes two passes over each of those 17 fields and prints seven numbers with ngx_sprintf
 *       (a format parser: ~300 instructions a number): ~6,300 instructions per line (e2e/bench/dataplane-cg.ts). Here
 *       one pass: the variables read by index, escaped as the log module escapes them ("\xHH" for '"', '\\',
 *       control bytes and bytes from 0x7f up; "-" when not found), the built-in fields and the $upstream_* lists
 *       computed from the request as nginx computes them. Never cached: each read is the request's state then.
 *
 * And, in ngx_http_portico_vars_peer.c:
 *   portico_peer_handoff;   (in an upstream block, after its balancer_by_lua)
 *       The first attempt of a request goes to the endpoint the router handed over, without the Lua balancer.
 * In ngx_http_portico_vars_header.c:
 *   portico_header_if_set <name> $variable;   (server level)
 *       The response header, when the variable is not empty (as add_header ... always, by index).
 * In ngx_http_portico_vars_route.c:
 *   $portico_route_declined, $portico_routed_natively
 *       The router's native path: plain routes the Lua router registered are routed in C; "1" when the router must run.
 * In ngx_http_portico_vars_generation.c:
 *   portico_data_generation;
 *       A counter in shared memory the configuration API bumps with each new version of the routing data, read by
 *       every request's router.
 *
 * An operand is a literal without "$" or exactly one variable, "$name". Every result is a variable of its own
 * (http level), evaluated when first read and kept for the request, as a map's is; it can be set like a map's
 * (`set`, ngx.var from Lua), which replaces the derived value for the rest of the request.
 */

#include "ngx_http_portico_vars.h"


typedef struct {
    ngx_int_t                  index;      /* the variable's index, or NGX_ERROR for a literal */
    ngx_str_t                  text;       /* the literal */
} ngx_http_pv_operand_t;


typedef enum {
    NGX_HTTP_PV_COALESCE = 0,
    NGX_HTTP_PV_IF,
    NGX_HTTP_PV_HOP,
    NGX_HTTP_PV_LOOP,
    NGX_HTTP_PV_REQUEST_ID,
    NGX_HTTP_PV_ACCESS_LINE
} ngx_http_pv_kind_e;


typedef struct {
    ngx_http_pv_kind_e         kind;
    ngx_uint_t                 nops;
    ngx_http_pv_operand_t     *ops;
    ngx_str_t                  id;         /* portico_hop's id */
    ngx_str_t                  name;       /* the result variable's */
} ngx_http_pv_var_t;


typedef struct {
    ngx_array_t                vars;       /* of ngx_http_pv_var_t *: every result declared */
} ngx_http_pv_main_conf_t;


static char *ngx_http_pv_coalesce(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static char *ngx_http_pv_if(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static char *ngx_http_pv_hop(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static char *ngx_http_pv_request_id(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static char *ngx_http_pv_access_line(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static ngx_int_t ngx_http_pv_line(ngx_http_request_t *r, ngx_http_pv_var_t *pv, ngx_str_t *out);
static ngx_int_t ngx_http_pv_variable(ngx_http_request_t *r, ngx_http_variable_value_t *v, uintptr_t data);
static void *ngx_http_pv_create_main_conf(ngx_conf_t *cf);
static ngx_int_t ngx_http_pv_check(ngx_conf_t *cf);


static ngx_command_t  ngx_http_pv_commands[] = {

    { ngx_string("portico_coalesce"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_2MORE,
      ngx_http_pv_coalesce,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("portico_if"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE3|NGX_CONF_TAKE4,
      ngx_http_pv_if,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("portico_hop"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE4,
      ngx_http_pv_hop,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("portico_request_id"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_http_pv_request_id,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("portico_access_line"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_http_pv_access_line,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("portico_data_generation"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_NOARGS,
      ngx_http_pv_data_generation,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("portico_header_if_set"),
      NGX_HTTP_SRV_CONF|NGX_CONF_TAKE2,
      ngx_http_pv_header_if_set,
      NGX_HTTP_SRV_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("portico_proxy_header"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE12,
      ngx_http_pv_proxy_header,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("portico_peer_handoff"),
      NGX_HTTP_UPS_CONF|NGX_CONF_NOARGS,
      ngx_http_pv_peer_handoff,
      NGX_HTTP_SRV_CONF_OFFSET,
      0,
      NULL },

      ngx_null_command
};


static ngx_http_module_t  ngx_http_portico_vars_module_ctx = {
    ngx_http_pv_route_add_variables,       /* preconfiguration: the native path's variables */
    ngx_http_pv_check,                     /* postconfiguration */
    ngx_http_pv_create_main_conf,          /* create main configuration */
    NULL,                                  /* init main configuration */
    ngx_http_pv_create_srv_conf,           /* create server configuration (server and upstream blocks) */
    NULL,                                  /* merge server configuration */
    ngx_http_pv_create_loc_conf,           /* create location configuration */
    ngx_http_pv_merge_loc_conf             /* merge location configuration */
};


ngx_module_t  ngx_http_portico_vars_module = {
    NGX_MODULE_V1,
    &ngx_http_portico_vars_module_ctx,     /* module context */
    ngx_http_pv_commands,                  /* module directives */
    NGX_HTTP_MODULE,                       /* module type */
    NULL,                                  /* init master */
    NULL,                                  /* init module */
    NULL,                                  /* init process */
    NULL,                                  /* init thread */
    NULL,                                  /* exit thread */
    NULL,                                  /* exit process */
    NULL,                                  /* exit master */
    NGX_MODULE_V1_PADDING
};


/* "$name" (letters, digits, "_") → name; NGX_ERROR when arg is not one variable. */
ngx_int_t
ngx_http_pv_name(ngx_conf_t *cf, ngx_str_t *arg, ngx_str_t *name)
{
    ngx_uint_t  i;

    if (arg->len < 2 || arg->data[0] != '$') {
        return NGX_ERROR;
    }

    for (i = 1; i < arg->len; i++) {
        u_char  c = arg->data[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
            return NGX_ERROR;
        }
    }

    name->len = arg->len - 1;
    name->data = arg->data + 1;
    return NGX_OK;
}


static char *
ngx_http_pv_operand(ngx_conf_t *cf, ngx_str_t *arg, ngx_http_pv_operand_t *op)
{
    ngx_str_t  name;

    if (arg->len > 0 && arg->data[0] == '$') {
        if (ngx_http_pv_name(cf, arg, &name) != NGX_OK) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "\"%V\": an operand is a literal or one variable (\"$name\")", arg);
            return NGX_CONF_ERROR;
        }
        op->index = ngx_http_get_variable_index(cf, &name);
        if (op->index == NGX_ERROR) {
            return NGX_CONF_ERROR;
        }
        ngx_str_null(&op->text);
        return NGX_CONF_OK;
    }

    if (ngx_strlchr(arg->data, arg->data + arg->len, '$') != NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "\"%V\": an operand is a literal or one variable (\"$name\")", arg);
        return NGX_CONF_ERROR;
    }

    op->index = NGX_ERROR;
    op->text = *arg;
    return NGX_CONF_OK;
}


/* Server and upstream blocks (ngx_http_portico_vars.h). */
void *
ngx_http_pv_create_srv_conf(ngx_conf_t *cf)
{
    return ngx_pcalloc(cf->pool, sizeof(ngx_http_pv_srv_conf_t));
}


static void *
ngx_http_pv_create_main_conf(ngx_conf_t *cf)
{
    ngx_http_pv_main_conf_t  *pmcf;

    pmcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_pv_main_conf_t));
    if (pmcf == NULL) {
        return NULL;
    }

    if (ngx_array_init(&pmcf->vars, cf->pool, 8, sizeof(ngx_http_pv_var_t *)) != NGX_OK) {
        return NULL;
    }

    return pmcf;
}


/* A directive after these that derives the same variable (a map) would replace the derivation without a word: every
 * result must still be derived here once the http block is read. */
static ngx_int_t
ngx_http_pv_check(ngx_conf_t *cf)
{
    ngx_uint_t                  i, k;
    ngx_hash_key_t             *key;
    ngx_http_pv_var_t         **pv;
    ngx_http_variable_t        *v;
    ngx_http_pv_main_conf_t    *pmcf;
    ngx_http_core_main_conf_t  *cmcf;

    pmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_portico_vars_module);
    cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module);
    pv = pmcf->vars.elts;

    for (i = 0; i < pmcf->vars.nelts; i++) {
        key = cmcf->variables_keys->keys.elts;

        for (k = 0; k < cmcf->variables_keys->keys.nelts; k++) {
            if (key[k].key.len != pv[i]->name.len
                || ngx_strncmp(key[k].key.data, pv[i]->name.data, pv[i]->name.len) != 0)
            {
                continue;
            }

            v = key[k].value;
            if (v->get_handler != ngx_http_pv_variable || v->data != (uintptr_t) pv[i]) {
                ngx_log_error(NGX_LOG_EMERG, cf->log, 0, "variable \"%V\" is already defined", &pv[i]->name);
                return NGX_ERROR;
            }
        }
    }

    return ngx_http_pv_header_init(cf);
}


/* Declares the result variable $name (arg) with its derivation. A variable some other directive already derives (a
 * map, another of these) is refused: one of the two would silently lose. */
static char *
ngx_http_pv_result(ngx_conf_t *cf, ngx_str_t *arg, ngx_http_pv_var_t *pv)
{
    ngx_str_t                 name;
    ngx_http_variable_t      *v;
    ngx_http_pv_var_t       **slot;
    ngx_http_pv_main_conf_t  *pmcf;

    if (ngx_http_pv_name(cf, arg, &name) != NGX_OK) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "\"%V\": the result must be a variable (\"$name\")", arg);
        return NGX_CONF_ERROR;
    }

    v = ngx_http_add_variable(cf, &name, NGX_HTTP_VAR_CHANGEABLE);
    if (v == NULL) {
        return NGX_CONF_ERROR;
    }

    if (v->get_handler != NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "variable \"%V\" is already defined", &name);
        return NGX_CONF_ERROR;
    }

    v->get_handler = ngx_http_pv_variable;
    v->data = (uintptr_t) pv;
    pv->name = name;

    pmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_portico_vars_module);
    slot = ngx_array_push(&pmcf->vars);
    if (slot == NULL) {
        return NGX_CONF_ERROR;
    }

    *slot = pv;
    return NGX_CONF_OK;
}


static ngx_http_pv_var_t *
ngx_http_pv_new(ngx_conf_t *cf, ngx_http_pv_kind_e kind, ngx_uint_t nops)
{
    ngx_http_pv_var_t  *pv;

    pv = ngx_pcalloc(cf->pool, sizeof(ngx_http_pv_var_t));
    if (pv == NULL) {
        return NULL;
    }

    pv->kind = kind;
    pv->nops = nops;
    pv->ops = ngx_pcalloc(cf->pool, nops * sizeof(ngx_http_pv_operand_t));
    if (pv->ops == NULL) {
        return NULL;
    }

    return pv;
}


static char *
ngx_http_pv_coalesce(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_str_t          *value = cf->args->elts;
    ngx_uint_t          i;
    ngx_http_pv_var_t  *pv;

    pv = ngx_http_pv_new(cf, NGX_HTTP_PV_COALESCE, cf->args->nelts - 2);
    if (pv == NULL) {
        return NGX_CONF_ERROR;
    }

    for (i = 2; i < cf->args->nelts; i++) {
        if (ngx_http_pv_operand(cf, &value[i], &pv->ops[i - 2]) != NGX_CONF_OK) {
            return NGX_CONF_ERROR;
        }
    }

    return ngx_http_pv_result(cf, &value[1], pv);
}


static char *
ngx_http_pv_if(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_str_t          *value = cf->args->elts;
    ngx_str_t           empty = ngx_string("");
    ngx_uint_t          i;
    ngx_http_pv_var_t  *pv;

    pv = ngx_http_pv_new(cf, NGX_HTTP_PV_IF, 3);
    if (pv == NULL) {
        return NGX_CONF_ERROR;
    }

    for (i = 0; i < 3; i++) {
        if (ngx_http_pv_operand(cf, i + 2 < cf->args->nelts ? &value[i + 2] : &empty, &pv->ops[i]) != NGX_CONF_OK) {
            return NGX_CONF_ERROR;
        }
    }

    return ngx_http_pv_result(cf, &value[1], pv);
}


static char *
ngx_http_pv_hop(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_str_t          *value = cf->args->elts;
    ngx_uint_t          i;
    ngx_http_pv_var_t  *hop, *loop;

    hop = ngx_http_pv_new(cf, NGX_HTTP_PV_HOP, 1);
    if (hop == NULL) {
        return NGX_CONF_ERROR;
    }

    if (ngx_http_pv_operand(cf, &value[3], &hop->ops[0]) != NGX_CONF_OK) {
        return NGX_CONF_ERROR;
    }

    /* The id is a header list entry: visible ASCII without the list's delimiters (space, comma). */
    if (value[4].len == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "portico_hop: the id is empty");
        return NGX_CONF_ERROR;
    }

    for (i = 0; i < value[4].len; i++) {
        u_char  c = value[4].data[i];

        if (c <= ' ' || c >= 0x7f || c == ',' || c == '$') {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "portico_hop: \"%V\" is not a header list entry", &value[4]);
            return NGX_CONF_ERROR;
        }
    }

    hop->id = value[4];

    loop = ngx_http_pv_new(cf, NGX_HTTP_PV_LOOP, 1);
    if (loop == NULL) {
        return NGX_CONF_ERROR;
    }

    loop->ops[0] = hop->ops[0];
    loop->id = hop->id;

    if (ngx_http_pv_result(cf, &value[1], hop) != NGX_CONF_OK) {
        return NGX_CONF_ERROR;
    }

    return ngx_http_pv_result(cf, &value[2], loop);
}


static char *
ngx_http_pv_request_id(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_str_t          *value = cf->args->elts;
    ngx_http_pv_var_t  *pv;

    pv = ngx_http_pv_new(cf, NGX_HTTP_PV_REQUEST_ID, 0);
    if (pv == NULL) {
        return NGX_CONF_ERROR;
    }

    return ngx_http_pv_result(cf, &value[1], pv);
}


/* The variables of the access line, in the order the line reads them. */
static ngx_str_t  ngx_http_pv_line_vars[] = {
    ngx_string("remote_addr"),
    ngx_string("remote_user"),
    ngx_string("request"),
    ngx_string("http_referer"),
    ngx_string("http_user_agent"),
    ngx_string("proxy_upstream_name"),
    ngx_string("proxy_alternative_upstream_name"),
    ngx_string("req_id")
};

#define NGX_HTTP_PV_LINE_VARS  (sizeof(ngx_http_pv_line_vars) / sizeof(ngx_str_t))


static char *
ngx_http_pv_access_line(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_str_t          *value = cf->args->elts;
    ngx_uint_t          i;
    ngx_http_pv_var_t  *pv;

    pv = ngx_http_pv_new(cf, NGX_HTTP_PV_ACCESS_LINE, NGX_HTTP_PV_LINE_VARS);
    if (pv == NULL) {
        return NGX_CONF_ERROR;
    }

    /* A variable nginx.conf does not define fails nginx -t ("unknown variable"), as in the log_format it replaces. */
    for (i = 0; i < NGX_HTTP_PV_LINE_VARS; i++) {
        pv->ops[i].index = ngx_http_get_variable_index(cf, &ngx_http_pv_line_vars[i]);
        if (pv->ops[i].index == NGX_ERROR) {
            return NGX_CONF_ERROR;
        }
    }

    return ngx_http_pv_result(cf, &value[1], pv);
}


/* The worker's half of its request ids: 16 hex characters of 64 random bits, drawn at the worker's first id. */
static u_char    ngx_http_pv_id_prefix[16];
static ngx_int_t ngx_http_pv_id_pid = -1;
static uint64_t  ngx_http_pv_id_n;

static void
ngx_http_pv_draw_id_prefix(ngx_log_t *log)
{
    u_char      raw[8];
    ssize_t     n = -1;
    ngx_fd_t    fd;
    ngx_uint_t  i;

    fd = ngx_open_file("/dev/urandom", NGX_FILE_RDONLY, NGX_FILE_OPEN, 0);
    if (fd != NGX_INVALID_FILE) {
        n = read(fd, raw, sizeof(raw));
        ngx_close_file(fd);
    }

    if (n != (ssize_t) sizeof(raw)) {
        /* Unique enough without it: the process, the time and nginx's generator, logged. */
        ngx_log_error(NGX_LOG_WARN, log, ngx_errno, "portico_request_id: /dev/urandom unreadable, ids from pid and time");
        for (i = 0; i < sizeof(raw); i++) {
            raw[i] = (u_char) ((ngx_pid >> (i * 4)) ^ (ngx_time() >> (i * 3)) ^ ngx_random());
        }
    }

    ngx_hex_dump(ngx_http_pv_id_prefix, raw, sizeof(raw));
    ngx_http_pv_id_pid = ngx_pid;
    ngx_http_pv_id_n = 0;
}


static ngx_int_t
ngx_http_pv_next_id(ngx_http_request_t *r, ngx_str_t *out)
{
    u_char    *p;
    uint64_t   n;
    ngx_int_t  i;

    static u_char  hex[] = "0123456789abcdef";

    /* Drawn again in each process (a worker forked after another one's first id gets its own). */
    if (ngx_http_pv_id_pid != ngx_pid) {
        ngx_http_pv_draw_id_prefix(r->connection->log);
    }

    p = ngx_pnalloc(r->pool, 32);
    if (p == NULL) {
        return NGX_ERROR;
    }

    ngx_memcpy(p, ngx_http_pv_id_prefix, 16);
    n = ++ngx_http_pv_id_n;
    for (i = 31; i >= 16; i--) {
        p[i] = hex[n & 0xf];
        n >>= 4;
    }

    out->data = p;
    out->len = 32;
    return NGX_OK;
}


static ngx_int_t
ngx_http_pv_get(ngx_http_request_t *r, ngx_http_pv_operand_t *op, ngx_str_t *out)
{
    ngx_http_variable_value_t  *vv;

    if (op->index == NGX_ERROR) {
        *out = op->text;
        return NGX_OK;
    }

    /* Flushed, as a map's complex value is: an operand nginx does not cache (e.g. $upstream_addr) is read now. */
    vv = ngx_http_get_flushed_variable(r, op->index);
    if (vv == NULL) {
        return NGX_ERROR;
    }

    if (vv->not_found) {
        ngx_str_set(out, "");
        return NGX_OK;
    }

    out->len = vv->len;
    out->data = vv->data;
    return NGX_OK;
}


/* "1" when id is one of the entries of the list h: preceded by its start, a space or a comma, and followed by its
 * end, a space or a comma. */
static ngx_uint_t
ngx_http_pv_listed(ngx_str_t *h, ngx_str_t *id)
{
    u_char  *p, *end, *last;

    if (h->len < id->len) {
        return 0;
    }

    end = h->data + h->len;
    last = end - id->len;

    for (p = h->data; p <= last; p++) {
        if (ngx_memcmp(p, id->data, id->len) != 0) {
            continue;
        }

        if ((p == h->data || p[-1] == ' ' || p[-1] == ',')
            && (p + id->len == end || p[id->len] == ' ' || p[id->len] == ','))
        {
            return 1;
        }
    }

    return 0;
}


static ngx_int_t
ngx_http_pv_variable(ngx_http_request_t *r, ngx_http_variable_value_t *v, uintptr_t data)
{
    ngx_http_pv_var_t  *pv = (ngx_http_pv_var_t *) data;

    u_char      *p;
    ngx_str_t    s, out;
    ngx_uint_t   i;

    ngx_str_set(&out, "");

    switch (pv->kind) {

    case NGX_HTTP_PV_COALESCE:
        for (i = 0; i < pv->nops; i++) {
            if (ngx_http_pv_get(r, &pv->ops[i], &s) != NGX_OK) {
                return NGX_ERROR;
            }
            if (s.len) {
                out = s;
                break;
            }
        }
        break;

    case NGX_HTTP_PV_IF:
        if (ngx_http_pv_get(r, &pv->ops[0], &s) != NGX_OK) {
            return NGX_ERROR;
        }
        if (ngx_http_pv_get(r, &pv->ops[s.len ? 1 : 2], &out) != NGX_OK) {
            return NGX_ERROR;
        }
        break;

    case NGX_HTTP_PV_HOP:
        if (ngx_http_pv_get(r, &pv->ops[0], &s) != NGX_OK) {
            return NGX_ERROR;
        }
        if (s.len == 0) {
            out = pv->id;
            break;
        }
        p = ngx_pnalloc(r->pool, s.len + 2 + pv->id.len);
        if (p == NULL) {
            return NGX_ERROR;
        }
        out.data = p;
        p = ngx_cpymem(p, s.data, s.len);
        *p++ = ',';
        *p++ = ' ';
        p = ngx_cpymem(p, pv->id.data, pv->id.len);
        out.len = p - out.data;
        break;

    case NGX_HTTP_PV_REQUEST_ID:
        if (ngx_http_pv_next_id(r, &out) != NGX_OK) {
            return NGX_ERROR;
        }
        break;

    case NGX_HTTP_PV_LOOP:
        if (ngx_http_pv_get(r, &pv->ops[0], &s) != NGX_OK) {
            return NGX_ERROR;
        }
        if (ngx_http_pv_listed(&s, &pv->id)) {
            ngx_str_set(&out, "1");
        }
        break;

    case NGX_HTTP_PV_ACCESS_LINE:
        if (ngx_http_pv_line(r, pv, &out) != NGX_OK) {
            return NGX_ERROR;
        }
        break;
    }

    v->len = out.len;
    v->data = out.data;
    v->valid = 1;
    v->no_cacheable = (pv->kind == NGX_HTTP_PV_ACCESS_LINE);
    v->not_found = 0;
    return NGX_OK;
}


/* ---- portico_access_line -------------------------------------------------------------------------------------- */

/* Which bytes the log module escapes by default: '"', '\\', 0x00-0x1f and 0x7f-0xff. */
static ngx_inline ngx_uint_t
ngx_http_pv_escaped(u_char c)
{
    return c < 0x20 || c >= 0x7f || c == '"' || c == '\\';
}


/*
 * Bytes as the log module writes a variable's value with its default escaping. dst: 4 bytes per byte of src. Eight
 * bytes at a time while none of them needs escaping (a request line, a User-Agent: almost always): one test per
 * word finds whether any byte is below 0x20, above 0x7e, '"' or '\\' (it may flag a word that has none; that word is
 * then copied byte by byte, which is always right).
 */

/* Non-zero when some byte of the word may need escaping. */
static ngx_inline uint64_t
ngx_http_pv_flagged(uint64_t x)
{
    return (((x - NGX_HTTP_PV_ONES * 0x20) & ~x)          /* a byte below 0x20 */
            | ((x + NGX_HTTP_PV_ONES) | x)                  /* a byte from 0x7f up */
            | ngx_http_pv_zero_byte(x ^ (NGX_HTTP_PV_ONES * '"'))
            | ngx_http_pv_zero_byte(x ^ (NGX_HTTP_PV_ONES * '\\')))
           & NGX_HTTP_PV_HIGHS;
}

static u_char *
ngx_http_pv_escape(u_char *dst, u_char *src, size_t len)
{
    static u_char  hex[] = "0123456789ABCDEF";
    u_char        *start, *end, *stop;
    uint64_t       x;

    start = src;
    end = src + len;

    for ( ;; ) {
        for ( ;; ) {
            if (end - src < 8) {
                break;
            }
            ngx_memcpy(&x, src, 8);
            if (ngx_http_pv_flagged(x)) {
                break;
            }
            ngx_memcpy(dst, &x, 8);
            dst += 8;
            src += 8;
        }

        if (src == end) {
            return dst;
        }

        /* A clean tail of a value of 8 bytes or more: the value's last 8 bytes as one word. Those before the tail
         * are clean too, so they were copied as they are and are the last bytes written: rewritten unchanged. */
        if (end - src < 8 && end - start >= 8) {
            ngx_memcpy(&x, end - 8, 8);
            if (!ngx_http_pv_flagged(x)) {
                ngx_memcpy(dst - (8 - (end - src)), &x, 8);
                return dst + (end - src);
            }
        }

        /* Byte by byte: the flagged word, or the tail. */
        stop = ngx_min(src + 8, end);
        for ( /* void */ ; src < stop; src++) {
            if (ngx_http_pv_escaped(*src)) {
                *dst++ = '\\';
                *dst++ = 'x';
                *dst++ = hex[*src >> 4];
                *dst++ = hex[*src & 0xf];
            } else {
                *dst++ = *src;
            }
        }
    }
}


/* The variable at index, escaped; "-" when it is not found. dst has room for 4 bytes per byte of the value. */
static u_char *
ngx_http_pv_line_var(ngx_http_variable_value_t *v, u_char *dst)
{
    if (v == NULL || v->not_found) {
        *dst++ = '-';
        return dst;
    }

    return ngx_http_pv_escape(dst, v->data, v->len);
}


/* A decimal integer as ngx_sprintf's "%O" / "%ui" print it ("%03ui" with width 3). */
static u_char *
ngx_http_pv_int(u_char *dst, int64_t n, ngx_uint_t width)
{
    u_char    tmp[24], *t = tmp + sizeof(tmp);
    uint64_t  u;

    if (n < 0) {
        *dst++ = '-';
        u = (uint64_t) 0 - (uint64_t) n;
    } else {
        u = (uint64_t) n;
    }

    do {
        *--t = (u_char) ('0' + u % 10);
        u /= 10;
    } while (u);

    while ((ngx_uint_t) (tmp + sizeof(tmp) - t) < width) {
        *--t = '0';
    }

    return ngx_cpymem(dst, t, tmp + sizeof(tmp) - t);
}


/* Milliseconds as seconds with three decimals ("%T.%03M" of ms / 1000, ms % 1000). */
static u_char *
ngx_http_pv_msec(u_char *dst, ngx_msec_int_t ms)
{
    dst = ngx_http_pv_int(dst, ms / 1000, 0);
    *dst++ = '.';
    return ngx_http_pv_int(dst, ms % 1000, 3);
}


typedef enum {
    NGX_HTTP_PV_UP_ADDR = 0,
    NGX_HTTP_PV_UP_LENGTH,
    NGX_HTTP_PV_UP_TIME,
    NGX_HTTP_PV_UP_STATUS
} ngx_http_pv_up_e;


/*
 * One of the $upstream_* lists, as the upstream module builds it: one entry per attempt, ", " between attempts, " : "
 * where an internal redirect moved the request to another upstream (a state without a peer; the entry after it is
 * skipped), "-" when there was no attempt. Room: per attempt, the peer's name (4 bytes per byte) or a number, + 3.
 */
static u_char *
ngx_http_pv_upstream(ngx_http_request_t *r, ngx_http_pv_up_e what, u_char *p)
{
    ngx_uint_t                  i, n;
    ngx_msec_int_t              ms;
    ngx_http_upstream_state_t  *state;

    if (r->upstream_states == NULL || r->upstream_states->nelts == 0) {
        *p++ = '-';
        return p;
    }

    state = r->upstream_states->elts;
    n = r->upstream_states->nelts;

    for (i = 0; /* void */; /* void */) {
        switch (what) {
        case NGX_HTTP_PV_UP_ADDR:
            if (state[i].peer) {
                p = ngx_http_pv_escape(p, state[i].peer->data, state[i].peer->len);
            }
            break;
        case NGX_HTTP_PV_UP_LENGTH:
            p = ngx_http_pv_int(p, state[i].response_length, 0);
            break;
        case NGX_HTTP_PV_UP_TIME:
            ms = (ngx_msec_int_t) state[i].response_time;
            if (ms != -1) {
                p = ngx_http_pv_msec(p, ngx_max(ms, 0));
            } else {
                *p++ = '-';
            }
            break;
        case NGX_HTTP_PV_UP_STATUS:
            if (state[i].status) {
                p = ngx_http_pv_int(p, (int64_t) state[i].status, 0);
            } else {
                *p++ = '-';
            }
            break;
        }

        if (++i == n) {
            break;
        }

        if (state[i].peer) {
            *p++ = ',';
            *p++ = ' ';
        } else {
            *p++ = ' ';
            *p++ = ':';
            *p++ = ' ';
            if (++i == n) {
                break;
            }
        }
    }

    return p;
}


static ngx_int_t
ngx_http_pv_line(ngx_http_request_t *r, ngx_http_pv_var_t *pv, ngx_str_t *out)
{
    u_char                     *p;
    size_t                      len;
    off_t                       sent;
    ngx_uint_t                  i, status;
    ngx_time_t                 *tp;
    ngx_msec_int_t              ms;
    ngx_http_variable_value_t  *v, *vals[NGX_HTTP_PV_LINE_VARS];
    ngx_http_upstream_state_t  *state;

    /* Room: each variable 4 bytes per byte (or "-"), the upstream lists, the fixed text and numbers. The values
     * read here are the ones written below. */
    len = 256 + ngx_cached_http_log_time.len;
    for (i = 0; i < NGX_HTTP_PV_LINE_VARS; i++) {
        v = ngx_http_get_indexed_variable(r, pv->ops[i].index);
        vals[i] = v;
        if (v != NULL && !v->not_found) {
            len += 4 * v->len;
        }
    }
    if (r->upstream_states) {
        state = r->upstream_states->elts;
        for (i = 0; i < r->upstream_states->nelts; i++) {
            len += 4 * (NGX_OFF_T_LEN + 8) + (state[i].peer ? 4 * state[i].peer->len : 0);
        }
    }

    p = ngx_pnalloc(r->pool, len);
    if (p == NULL) {
        return NGX_ERROR;
    }
    out->data = p;

    p = ngx_http_pv_line_var(vals[0], p);               /* $remote_addr */
    *p++ = ' '; *p++ = '-'; *p++ = ' ';
    p = ngx_http_pv_line_var(vals[1], p);               /* $remote_user */
    *p++ = ' '; *p++ = '[';
    p = ngx_cpymem(p, ngx_cached_http_log_time.data, ngx_cached_http_log_time.len);
    *p++ = ']'; *p++ = ' '; *p++ = '"';
    p = ngx_http_pv_line_var(vals[2], p);               /* $request */
    *p++ = '"'; *p++ = ' ';

    /* $status */
    if (r->err_status) {
        status = r->err_status;
    } else if (r->headers_out.status) {
        status = r->headers_out.status;
    } else if (r->http_version == NGX_HTTP_VERSION_9) {
        status = 9;
    } else {
        status = 0;
    }
    p = ngx_http_pv_int(p, (int64_t) status, 3);
    *p++ = ' ';

    /* $body_bytes_sent */
    sent = r->connection->sent - r->header_size;
    p = ngx_http_pv_int(p, sent > 0 ? sent : 0, 0);
    *p++ = ' '; *p++ = '"';
    p = ngx_http_pv_line_var(vals[3], p);               /* $http_referer */
    *p++ = '"'; *p++ = ' '; *p++ = '"';
    p = ngx_http_pv_line_var(vals[4], p);               /* $http_user_agent */
    *p++ = '"'; *p++ = ' ';
    p = ngx_http_pv_int(p, r->request_length, 0);                    /* $request_length */
    *p++ = ' ';

    /* $request_time */
    tp = ngx_timeofday();
    ms = (ngx_msec_int_t) ((tp->sec - r->start_sec) * 1000 + (tp->msec - r->start_msec));
    p = ngx_http_pv_msec(p, ngx_max(ms, 0));
    *p++ = ' '; *p++ = '[';
    p = ngx_http_pv_line_var(vals[5], p);               /* $proxy_upstream_name */
    *p++ = ']'; *p++ = ' '; *p++ = '[';
    p = ngx_http_pv_line_var(vals[6], p);               /* $proxy_alternative_upstream_name */
    *p++ = ']'; *p++ = ' ';
    p = ngx_http_pv_upstream(r, NGX_HTTP_PV_UP_ADDR, p);
    *p++ = ' ';
    p = ngx_http_pv_upstream(r, NGX_HTTP_PV_UP_LENGTH, p);
    *p++ = ' ';
    p = ngx_http_pv_upstream(r, NGX_HTTP_PV_UP_TIME, p);
    *p++ = ' ';
    p = ngx_http_pv_upstream(r, NGX_HTTP_PV_UP_STATUS, p);
    *p++ = ' ';
    p = ngx_http_pv_line_var(vals[7], p);               /* $req_id */

    out->len = p - out->data;
    return NGX_OK;
}


/*
 * Writes by index, for Portico's Lua code (nginx-assets/lua/portico/varset.lua, through LuaJIT's FFI): ngx.var's
 * setter lower-cases and hashes the variable's name on every write (about 440 instructions per write,
 * e2e/bench/dataplane-cg.ts); the router writes several per request. Only Portico's own variables ("portico_*") that
 * nginx.conf lets be set (a `set`, a map, a derivation of this module) can be named, as ngx.var would allow them.
 */

/* The index of a variable of the running configuration by its name, or -1 when nginx.conf never reads it (then it has
 * none) or, with `changeable`, when it cannot be set. Also the native path's (ngx_http_portico_vars_route.c). */
ngx_int_t
ngx_http_pv_index_of(const u_char *name, size_t len, ngx_uint_t changeable)
{
    ngx_uint_t                  i;
    ngx_http_variable_t        *v;
    ngx_http_core_main_conf_t  *cmcf;

    cmcf = ngx_http_cycle_get_module_main_conf(ngx_cycle, ngx_http_core_module);
    if (cmcf == NULL) {
        return -1;
    }

    v = cmcf->variables.elts;

    for (i = 0; i < cmcf->variables.nelts; i++) {
        if (v[i].name.len == len && ngx_strncmp(v[i].name.data, name, len) == 0) {
            return (!changeable || (v[i].flags & NGX_HTTP_VAR_CHANGEABLE)) ? (ngx_int_t) i : -1;
        }
    }

    return -1;
}


/* The index of $name, or -1 when it is not one of those (or nginx.conf never reads it: then it has no index). */
ngx_int_t
ngx_http_portico_vars_index(const u_char *name, size_t len)
{
    if (len <= sizeof("portico_") - 1 || ngx_strncmp(name, "portico_", sizeof("portico_") - 1) != 0) {
        return -1;
    }

    return ngx_http_pv_index_of(name, len, 1);
}


/* The value of the variable with that index (ngx_http_portico_vars_index) for this request, as ngx.var's setter stores
 * it: a copy in the request's pool, kept for the rest of the request. 0, or -1 (an index out of range, no memory). */
int
ngx_http_portico_vars_set(ngx_http_request_t *r, ngx_int_t index, const u_char *data, size_t len)
{
    u_char                     *p;
    ngx_http_variable_value_t  *vv;
    ngx_http_core_main_conf_t  *cmcf;

    cmcf = ngx_http_get_module_main_conf(r, ngx_http_core_module);

    if (index < 0 || (ngx_uint_t) index >= cmcf->variables.nelts) {
        return -1;
    }

    p = (u_char *) "";
    if (len) {
        p = ngx_pnalloc(r->pool, len);
        if (p == NULL) {
            return -1;
        }
        ngx_memcpy(p, data, len);
    }

    vv = &r->variables[index];
    vv->len = len;
    vv->data = p;
    vv->valid = 1;
    vv->no_cacheable = 0;
    vv->not_found = 0;
    return 0;
}


/*
 * The request's $host and $uri for the router (nginx-assets/lua/portico/router.lua, through LuaJIT's FFI), read where
 * nginx keeps them: $host is the host of the request line or Host header nginx validated and lower-cased, else the
 * server's name (ngx_http_variable_host's rule); $uri is the normalized path. Passed as set_by_lua's arguments, each
 * was a complex value evaluated per request before lua-nginx-module made it a Lua string.
 */
void
ngx_http_portico_vars_host_uri(ngx_http_request_t *r, const u_char **host, size_t *host_len, const u_char **uri,
    size_t *uri_len)
{
    ngx_http_core_srv_conf_t  *cscf;

    if (r->headers_in.server.len) {
        *host = r->headers_in.server.data;
        *host_len = r->headers_in.server.len;
    } else {
        cscf = ngx_http_get_module_srv_conf(r, ngx_http_core_module);
        *host = cscf->server_name.data;
        *host_len = cscf->server_name.len;
    }

    *uri = r->uri.data;
    *uri_len = r->uri.len;
}
