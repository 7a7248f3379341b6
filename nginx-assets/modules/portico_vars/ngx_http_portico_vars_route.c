/*
 * The router's native path (part of Portico's variables module):
 *
 *   if ($portico_route_declined) { set_by_lua $portico_jump '... router.route_set() ...'; }
 *
 * Most requests go to a host whose matching route is a plain one: an exact or prefix path, one backend balanced by
 * round-robin, at most its own proxy timeouts, nothing else (no plugins, profile, retry attempts, split, mirror, error
 * pages, tracing, body limit, health checking). For those, reading $portico_route_declined routes the request here,
 * in C, with what the Lua router (nginx-assets/lua/portico/router.lua) registered through LuaJIT's FFI: it writes
 * $portico_jump (""), $portico_backend, $portico_upstream_name, $portico_mk and $portico_tls_host as the router
 * would, hands the first attempt's endpoint to nginx (ngx_http_portico_vars_peer.c) and the variable is "", so
 * set_by_lua never runs. Anything else, and every request this table cannot answer exactly as the router would,
 * makes it "1": the router runs as before. set_by_lua costs a Lua call through lua-nginx-module and LuaJIT's trace
 * of the router (~2,800 instructions, ~3 us of CPU per request: e2e/bench/dataplane-cg.ts, dataplane-cpu.ts).
 *
 * The table (per worker) is filled lazily: the router registers a host the first time it routes a request for it
 * (by the request's name: a name reached through a wildcard or "_" is registered as a name of its own, with that
 * host's routes, at most 256 such names per generation so Host names a client makes up cannot grow it), and each
 * backend that host's plain routes use (its endpoints, their weights). It belongs to one generation of the routing data
 * (ngx_http_portico_vars_generation.c): when the configuration API publishes a change, the counter moves, every
 * request declines until the router has synchronized and reset the table, and hosts are registered again as they are
 * requested. Nothing here outlives a reset: a request copies what it keeps into its own pool.
 *
 * Declined, besides hosts and routes that are not plain: subrequests, internal redirects (the router's own rules
 * for those), Gateway listener ports (Gateway API's precedence across routes), a path a regex could match (hosts with
 * regex rules answer only exact paths here), nginx's "/foo" -> "/foo/" redirect, the redirect to HTTPS, an Upgrade on
 * a route that refuses it, and anything no path matches.
 */

#include "ngx_http_portico_vars.h"


#define NGX_HTTP_PV_ROUTE_BUCKETS    8192           /* hash buckets per table (a power of two) */
#define NGX_HTTP_PV_ROUTE_MAX_PATHS  64             /* a host with more paths is left to the router */
#define NGX_HTTP_PV_ROUTE_MAX_PORTS  64

/* The index of a variable of the running configuration (ngx_http_pv_index_of), by a literal name. */
#define ngx_http_pv_route_var(name, changeable)                                                                     \
    ngx_http_pv_index_of((u_char *) name, sizeof(name) - 1, changeable)

/* A path's flags (ngx_http_portico_vars_route_path), as router.lua passes them. */
#define NGX_HTTP_PV_ROUTE_HTTPS       1             /* ssl-redirect: plain HTTP is redirected (by the router) */
#define NGX_HTTP_PV_ROUTE_NO_UPGRADE  2             /* an Upgrade request is refused (by the router) */
#define NGX_HTTP_PV_ROUTE_DECLINE     4             /* not a plain route: the router answers */

/* A host's flags. */
#define NGX_HTTP_PV_ROUTE_TLS         1             /* the host has a TLS section ($portico_tls_host) */
#define NGX_HTTP_PV_ROUTE_REGEX       2             /* the host has regex rules: only exact paths are answered here */


typedef struct {
    struct sockaddr               *sockaddr;
    socklen_t                      socklen;
    ngx_str_t                      name;
    ngx_int_t                      weight;
    ngx_int_t                      current;
} ngx_http_pv_route_peer_t;


typedef struct ngx_http_pv_route_backend_s  ngx_http_pv_route_backend_t;

struct ngx_http_pv_route_backend_s {
    ngx_http_pv_route_backend_t   *next;
    ngx_str_t                      id;
    ngx_uint_t                     npeers;
    ngx_uint_t                     filled;
    ngx_uint_t                     more;
    ngx_http_pv_route_peer_t      *peers;
};


typedef struct {
    ngx_str_t                      path;
    size_t                         len;        /* bytes compared: 0 for the prefix "/", which matches everything */
    ngx_uint_t                     dir;        /* a prefix ending in "/" (no boundary check after it) */
    ngx_uint_t                     flags;
    ngx_http_pv_route_backend_t   *backend;
    ngx_str_t                      upstream;   /* ingress-nginx's name of the backend ($portico_upstream_name) */
    ngx_str_t                      mk;         /* the route's metric labels ($portico_mk), empty for the host's */
    ngx_msec_t                     timeouts[3]; /* the route's connect, send, read timeouts; 0: the location's */
} ngx_http_pv_route_path_t;


typedef struct ngx_http_pv_route_host_s  ngx_http_pv_route_host_t;

struct ngx_http_pv_route_host_s {
    ngx_http_pv_route_host_t      *next;
    ngx_str_t                      name;
    ngx_str_t                      mk;
    ngx_uint_t                     flags;
    ngx_uint_t                     nexact;     /* paths: the exact ones, then nginx's slash redirects, then prefixes */
    ngx_uint_t                     nslash;
    ngx_uint_t                     total;
    ngx_uint_t                     filled;
    ngx_http_pv_route_path_t      *paths;
};


/* The worker's table. */
static struct {
    ngx_pool_t                    *pool;       /* NULL: no table, every request declines */
    int                            generation;
    ngx_http_pv_route_host_t     **hosts;
    ngx_http_pv_route_backend_t  **backends;
    ngx_http_pv_route_host_t      *host;       /* the host being registered */
    ngx_http_pv_route_backend_t   *backend;    /* the backend being registered */
    ngx_uint_t                     nports;
    in_port_t                      ports[NGX_HTTP_PV_ROUTE_MAX_PORTS];
    ngx_int_t                      jump, backend_var, upstream, mk, tls, proto;   /* variable indexes */
} ngx_http_pv_route;


static ngx_int_t ngx_http_pv_route_declined_variable(ngx_http_request_t *r, ngx_http_variable_value_t *v,
    uintptr_t data);
static ngx_int_t ngx_http_pv_route_native_variable(ngx_http_request_t *r, ngx_http_variable_value_t *v,
    uintptr_t data);


static ngx_http_variable_t  ngx_http_pv_route_vars[] = {
    { ngx_string("portico_route_declined"), NULL, ngx_http_pv_route_declined_variable, 0,
      NGX_HTTP_VAR_NOCACHEABLE|NGX_HTTP_VAR_NOHASH, 0 },
    { ngx_string("portico_routed_natively"), NULL, ngx_http_pv_route_native_variable, 0,
      NGX_HTTP_VAR_NOCACHEABLE|NGX_HTTP_VAR_NOHASH, 0 },
    ngx_http_null_variable
};


ngx_int_t
ngx_http_pv_route_add_variables(ngx_conf_t *cf)
{
    ngx_http_variable_t  *var, *v;

    for (v = ngx_http_pv_route_vars; v->name.len; v++) {
        var = ngx_http_add_variable(cf, &v->name, v->flags);
        if (var == NULL) {
            return NGX_ERROR;
        }
        var->get_handler = v->get_handler;
        var->data = v->data;
    }

    return NGX_OK;
}


static ngx_uint_t
ngx_http_pv_route_bucket(const u_char *data, size_t len)
{
    return ngx_hash_key((u_char *) data, len) & (NGX_HTTP_PV_ROUTE_BUCKETS - 1);
}


static ngx_int_t
ngx_http_pv_route_copy(ngx_str_t *dst, const u_char *data, size_t len)
{
    dst->len = len;
    dst->data = (u_char *) "";
    if (len == 0) {
        return NGX_OK;
    }
    dst->data = ngx_pnalloc(ngx_http_pv_route.pool, len);
    if (dst->data == NULL) {
        return NGX_ERROR;
    }
    ngx_memcpy(dst->data, data, len);
    return NGX_OK;
}


/*
 * The functions the router calls (nginx-assets/lua/portico/native.lua, through LuaJIT's FFI). Each returns 0, or -1
 * when it cannot (no table, no memory, a value out of range): what failed to register is then left to the router.
 */

/* Drops the table and starts an empty one for this generation of the routing data; `ports` are the Gateway listener
 * ports (declined). A generation < 0, or a configuration without the variables the router writes: no table. */
int
ngx_http_portico_vars_route_reset(int generation, const int *ports, int nports)
{
    int  i;

    if (ngx_http_pv_route.pool) {
        ngx_destroy_pool(ngx_http_pv_route.pool);
        ngx_http_pv_route.pool = NULL;
    }
    ngx_http_pv_route.host = NULL;
    ngx_http_pv_route.backend = NULL;

    if (generation < 0 || nports < 0 || nports > NGX_HTTP_PV_ROUTE_MAX_PORTS) {
        return -1;
    }

    ngx_http_pv_route.jump = ngx_http_pv_route_var("portico_jump", 1);
    ngx_http_pv_route.backend_var = ngx_http_pv_route_var("portico_backend", 1);
    ngx_http_pv_route.upstream = ngx_http_pv_route_var("portico_upstream_name", 1);
    ngx_http_pv_route.mk = ngx_http_pv_route_var("portico_mk", 1);
    ngx_http_pv_route.tls = ngx_http_pv_route_var("portico_tls_host", 1);
    ngx_http_pv_route.proto = ngx_http_pv_route_var("portico_forwarded_proto", 0);

    if (ngx_http_pv_route.jump < 0 || ngx_http_pv_route.backend_var < 0 || ngx_http_pv_route.upstream < 0) {
        return -1;
    }

    ngx_http_pv_route.pool = ngx_create_pool(16384, ngx_cycle->log);
    if (ngx_http_pv_route.pool == NULL) {
        return -1;
    }

    ngx_http_pv_route.hosts = ngx_pcalloc(ngx_http_pv_route.pool,
                                          NGX_HTTP_PV_ROUTE_BUCKETS * sizeof(ngx_http_pv_route_host_t *));
    ngx_http_pv_route.backends = ngx_pcalloc(ngx_http_pv_route.pool,
                                             NGX_HTTP_PV_ROUTE_BUCKETS * sizeof(ngx_http_pv_route_backend_t *));
    if (ngx_http_pv_route.hosts == NULL || ngx_http_pv_route.backends == NULL) {
        ngx_destroy_pool(ngx_http_pv_route.pool);
        ngx_http_pv_route.pool = NULL;
        return -1;
    }

    for (i = 0; i < nports; i++) {
        ngx_http_pv_route.ports[i] = (in_port_t) ports[i];
    }
    ngx_http_pv_route.nports = (ngx_uint_t) nports;
    ngx_http_pv_route.generation = generation;
    return 0;
}


/* A backend whose endpoints round-robin balances (smooth weighted, as rr.lua): its id, how many endpoints follow
 * (ngx_http_portico_vars_route_peer), and the retries allowed after the first attempt. */
int
ngx_http_portico_vars_route_backend(const u_char *id, size_t len, int npeers, int more)
{
    ngx_uint_t                    k;
    ngx_http_pv_route_backend_t  *b;

    ngx_http_pv_route.backend = NULL;

    if (ngx_http_pv_route.pool == NULL || len == 0 || npeers <= 0 || more < 0) {
        return -1;
    }

    b = ngx_pcalloc(ngx_http_pv_route.pool, sizeof(ngx_http_pv_route_backend_t));
    if (b == NULL || ngx_http_pv_route_copy(&b->id, id, len) != NGX_OK) {
        return -1;
    }

    b->peers = ngx_pcalloc(ngx_http_pv_route.pool, npeers * sizeof(ngx_http_pv_route_peer_t));
    if (b->peers == NULL) {
        return -1;
    }
    b->npeers = (ngx_uint_t) npeers;
    b->more = (ngx_uint_t) more;

    /* First in its chain: a backend registered again replaces the earlier one for the paths registered after it. */
    k = ngx_http_pv_route_bucket(id, len);
    b->next = ngx_http_pv_route.backends[k];
    ngx_http_pv_route.backends[k] = b;
    ngx_http_pv_route.backend = b;
    return 0;
}


/* The next endpoint of the backend being registered: its binary address and name (ngx_http_portico_vars_peer_addr),
 * and its weight (> 0). */
int
ngx_http_portico_vars_route_peer(const u_char *sa, size_t salen, const u_char *name, size_t name_len, int weight)
{
    ngx_http_pv_route_peer_t     *p;
    ngx_http_pv_route_backend_t  *b;

    b = ngx_http_pv_route.backend;

    if (b == NULL || b->filled >= b->npeers || salen == 0 || salen > sizeof(ngx_sockaddr_t) || name_len == 0
        || name_len > NGX_SOCKADDR_STRLEN || weight <= 0)
    {
        return -1;
    }

    p = &b->peers[b->filled];
    p->sockaddr = ngx_pnalloc(ngx_http_pv_route.pool, salen);
    if (p->sockaddr == NULL || ngx_http_pv_route_copy(&p->name, name, name_len) != NGX_OK) {
        return -1;
    }
    ngx_memcpy(p->sockaddr, sa, salen);
    p->socklen = (socklen_t) salen;
    p->weight = weight;
    p->current = 0;
    b->filled++;
    return 0;
}


static ngx_http_pv_route_backend_t *
ngx_http_pv_route_find_backend(const u_char *id, size_t len)
{
    ngx_http_pv_route_backend_t  *b;

    for (b = ngx_http_pv_route.backends[ngx_http_pv_route_bucket(id, len)]; b; b = b->next) {
        if (b->id.len == len && ngx_memcmp(b->id.data, id, len) == 0) {
            return b->filled == b->npeers ? b : NULL;
        }
    }

    return NULL;
}


/* A host (its exact name, as the router's hosts are keyed), the metric labels of what no route of its own names, its
 * flags, and how many paths follow (ngx_http_portico_vars_route_path): exact ones, slash redirects, then prefixes
 * longest first (the router's order). */
int
ngx_http_portico_vars_route_host(const u_char *name, size_t len, const u_char *mk, size_t mk_len, int flags,
    int nexact, int nslash, int nprefix)
{
    ngx_uint_t                 k;
    ngx_http_pv_route_host_t  *h;

    ngx_http_pv_route.host = NULL;

    if (ngx_http_pv_route.pool == NULL || len == 0 || nexact < 0 || nslash < 0 || nprefix < 0
        || nexact + nslash + nprefix > NGX_HTTP_PV_ROUTE_MAX_PATHS)
    {
        return -1;
    }

    h = ngx_pcalloc(ngx_http_pv_route.pool, sizeof(ngx_http_pv_route_host_t));
    if (h == NULL || ngx_http_pv_route_copy(&h->name, name, len) != NGX_OK
        || ngx_http_pv_route_copy(&h->mk, mk, mk_len) != NGX_OK)
    {
        return -1;
    }

    h->flags = (ngx_uint_t) flags;
    h->nexact = (ngx_uint_t) nexact;
    h->nslash = (ngx_uint_t) nslash;
    h->total = (ngx_uint_t) (nexact + nslash + nprefix);

    if (h->total) {
        h->paths = ngx_pcalloc(ngx_http_pv_route.pool, h->total * sizeof(ngx_http_pv_route_path_t));
        if (h->paths == NULL) {
            return -1;
        }
    }

    /* First in its chain: a host registered again replaces the earlier one once complete (until then it declines). */
    k = ngx_http_pv_route_bucket(name, len);
    h->next = ngx_http_pv_route.hosts[k];
    ngx_http_pv_route.hosts[k] = h;
    ngx_http_pv_route.host = h;
    return 0;
}


/* The next path of the host being registered: for a plain route, its backend (registered before), that backend's
 * ingress-nginx name, the route's metric labels and its connect, send and read timeouts (ms, 0 for the location's;
 * all three or none, as the balancer sets them); flags as above (DECLINE for a path the router must answer). */
int
ngx_http_portico_vars_route_path(const u_char *path, size_t len, const u_char *backend, size_t backend_len,
    const u_char *upstream, size_t upstream_len, const u_char *mk, size_t mk_len, int flags, int connect_ms,
    int send_ms, int read_ms)
{
    ngx_http_pv_route_host_t  *h;
    ngx_http_pv_route_path_t  *p;

    h = ngx_http_pv_route.host;

    if (h == NULL || h->filled >= h->total || len == 0 || path[0] != '/' || connect_ms < 0 || send_ms < 0
        || read_ms < 0 || (connect_ms == 0) != (send_ms == 0) || (connect_ms == 0) != (read_ms == 0))
    {
        return -1;
    }

    p = &h->paths[h->filled];
    p->timeouts[0] = (ngx_msec_t) connect_ms;
    p->timeouts[1] = (ngx_msec_t) send_ms;
    p->timeouts[2] = (ngx_msec_t) read_ms;

    if (ngx_http_pv_route_copy(&p->path, path, len) != NGX_OK) {
        return -1;
    }
    p->len = (len == 1) ? 0 : len;
    p->dir = (path[len - 1] == '/');
    p->flags = (ngx_uint_t) flags;

    if (!(flags & NGX_HTTP_PV_ROUTE_DECLINE)) {
        p->backend = ngx_http_pv_route_find_backend(backend, backend_len);
        if (p->backend == NULL
            || ngx_http_pv_route_copy(&p->upstream, upstream, upstream_len) != NGX_OK
            || ngx_http_pv_route_copy(&p->mk, mk, mk_len) != NGX_OK)
        {
            p->flags |= NGX_HTTP_PV_ROUTE_DECLINE;
        }
    }

    h->filled++;
    return 0;
}


/* The path of h that serves uri, by nginx's location order as router.lua's match(); NULL when the router must
 * answer (nothing matched, a slash redirect, a path a regex might match, a route that is not plain). */
static ngx_http_pv_route_path_t *
ngx_http_pv_route_match(ngx_http_pv_route_host_t *h, ngx_str_t *uri)
{
    size_t                     len;
    ngx_uint_t                 i;
    ngx_http_pv_route_path_t  *p;

    p = h->paths;

    for (i = 0; i < h->nexact; i++) {
        if (p[i].path.len == uri->len && ngx_memcmp(p[i].path.data, uri->data, uri->len) == 0) {
            return (p[i].flags & NGX_HTTP_PV_ROUTE_DECLINE) ? NULL : &p[i];
        }
    }

    for ( /* void */ ; i < h->nexact + h->nslash; i++) {
        if (p[i].path.len == uri->len && ngx_memcmp(p[i].path.data, uri->data, uri->len) == 0) {
            return NULL;
        }
    }

    if (h->flags & NGX_HTTP_PV_ROUTE_REGEX) {
        return NULL;
    }

    for ( /* void */ ; i < h->total; i++) {
        len = p[i].len;
        if (len == 0
            || (uri->len >= len && (uri->len == len || p[i].dir || uri->data[len] == '/')
                && ngx_memcmp(p[i].path.data, uri->data, len) == 0))
        {
            return (p[i].flags & NGX_HTTP_PV_ROUTE_DECLINE) ? NULL : &p[i];
        }
    }

    return NULL;
}


static u_char *
ngx_http_pv_route_set(ngx_http_request_t *r, ngx_int_t index, ngx_str_t *value, u_char *buf)
{
    ngx_http_variable_value_t  *vv;

    vv = &r->variables[index];
    vv->len = value->len;
    vv->data = buf;
    vv->valid = 1;
    vv->no_cacheable = 0;
    vv->not_found = 0;
    return ngx_cpymem(buf, value->data, value->len);
}


/* Routes the request natively: NGX_OK when it did (every variable written, the endpoint handed over), NGX_DECLINED
 * when the router must (nothing written). */
static ngx_int_t
ngx_http_pv_route_request(ngx_http_request_t *r)
{
    size_t                        size;
    u_char                       *buf;
    in_port_t                     port;
    ngx_str_t                     host, uri, *mk, one = ngx_string("1"), empty = ngx_string("");
    ngx_uint_t                    i, k;
    ngx_int_t                     total;
    ngx_http_pv_route_host_t     *h;
    ngx_http_pv_route_path_t     *p;
    ngx_http_pv_route_peer_t     *peer, *best;
    ngx_http_pv_route_backend_t  *b;
    ngx_http_variable_value_t    *proto;

    if (ngx_http_pv_route.pool == NULL || r != r->main || r->internal
        || ngx_http_portico_vars_generation() != ngx_http_pv_route.generation)
    {
        return NGX_DECLINED;
    }

    if (ngx_http_pv_route.nports) {
        port = ngx_inet_get_port(r->connection->local_sockaddr);
        for (i = 0; i < ngx_http_pv_route.nports; i++) {
            if (ngx_http_pv_route.ports[i] == port) {
                return NGX_DECLINED;
            }
        }
    }

    /* $host and $uri, as the router reads them. */
    ngx_http_portico_vars_host_uri(r, (const u_char **) &host.data, &host.len, (const u_char **) &uri.data, &uri.len);
    if (host.len == 0) {
        return NGX_DECLINED;
    }

    k = ngx_http_pv_route_bucket(host.data, host.len);
    for (h = ngx_http_pv_route.hosts[k]; h; h = h->next) {
        if (h->name.len == host.len && ngx_memcmp(h->name.data, host.data, host.len) == 0) {
            break;
        }
    }
    if (h == NULL || h->filled != h->total) {
        return NGX_DECLINED;
    }

    p = ngx_http_pv_route_match(h, &uri);
    if (p == NULL) {
        return NGX_DECLINED;
    }

    if (p->flags & NGX_HTTP_PV_ROUTE_HTTPS) {
        /* The router redirects when the client's scheme ($portico_forwarded_proto, else $scheme) is "http". A
         * configuration where that variable has no index: the router reads it. */
        if (ngx_http_pv_route.proto < 0) {
            return NGX_DECLINED;
        }
        proto = ngx_http_get_indexed_variable(r, ngx_http_pv_route.proto);
        if (proto == NULL || proto->not_found) {
#if (NGX_HTTP_SSL)
            if (r->connection->ssl == NULL) {
                return NGX_DECLINED;
            }
#else
            return NGX_DECLINED;
#endif
        } else if (proto->len == 4 && ngx_strncmp(proto->data, "http", 4) == 0) {
            return NGX_DECLINED;
        }
    }

    if ((p->flags & NGX_HTTP_PV_ROUTE_NO_UPGRADE) && r->headers_in.upgrade) {
        return NGX_DECLINED;
    }

    mk = p->mk.len ? &p->mk : &h->mk;
    if (mk->len && ngx_http_pv_route.mk < 0) {
        return NGX_DECLINED;
    }
    if ((h->flags & NGX_HTTP_PV_ROUTE_TLS) && ngx_http_pv_route.tls < 0) {
        return NGX_DECLINED;
    }

    /* The endpoint: smooth weighted round-robin (rr.lua's next()). */
    b = p->backend;
    if (b->npeers == 1) {
        best = &b->peers[0];
    } else {
        best = NULL;
        total = 0;
        for (i = 0; i < b->npeers; i++) {
            peer = &b->peers[i];
            peer->current += peer->weight;
            total += peer->weight;
            if (best == NULL || peer->current > best->current) {
                best = peer;
            }
        }
        best->current -= total;
    }

    size = b->id.len + p->upstream.len + mk->len + 1;
    buf = ngx_pnalloc(r->pool, size);
    if (buf == NULL) {
        return NGX_DECLINED;
    }

    if (ngx_http_pv_peer_handoff_native(r, best->sockaddr, best->socklen, &best->name, b->more, p->timeouts)
        != NGX_OK)
    {
        return NGX_DECLINED;
    }

    buf = ngx_http_pv_route_set(r, ngx_http_pv_route.backend_var, &b->id, buf);
    buf = ngx_http_pv_route_set(r, ngx_http_pv_route.upstream, &p->upstream, buf);
    if (mk->len) {
        buf = ngx_http_pv_route_set(r, ngx_http_pv_route.mk, mk, buf);
    }
    if (h->flags & NGX_HTTP_PV_ROUTE_TLS) {
        buf = ngx_http_pv_route_set(r, ngx_http_pv_route.tls, &one, buf);
    }
    (void) ngx_http_pv_route_set(r, ngx_http_pv_route.jump, &empty, buf);

    return NGX_OK;
}


/* "" when the request was routed here, "1" when the router must route it. Never cached: each read routes. */
static ngx_int_t
ngx_http_pv_route_declined_variable(ngx_http_request_t *r, ngx_http_variable_value_t *v, uintptr_t data)
{
    v->valid = 1;
    v->no_cacheable = 1;
    v->not_found = 0;

    if (ngx_http_pv_route_request(r) == NGX_OK) {
        v->len = 0;
        v->data = (u_char *) "";
    } else {
        v->len = 1;
        v->data = (u_char *) "1";
    }

    return NGX_OK;
}


/* "1" when the request's current routing was native (for tests and logs), else "". */
static ngx_int_t
ngx_http_pv_route_native_variable(ngx_http_request_t *r, ngx_http_variable_value_t *v, uintptr_t data)
{
    v->valid = 1;
    v->no_cacheable = 1;
    v->not_found = 0;

    if (ngx_http_portico_vars_peer_native(r)) {
        v->len = 1;
        v->data = (u_char *) "1";
    } else {
        v->len = 0;
        v->data = (u_char *) "";
    }

    return NGX_OK;
}
