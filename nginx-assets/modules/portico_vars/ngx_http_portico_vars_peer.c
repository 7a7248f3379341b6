/*
 * The router's peer hand-off (part of Portico's variables module):
 *
 *   upstream portico_upstream { server 0.0.0.1:1234; balancer_by_lua_block { ... } portico_peer_handoff; keepalive ...; }
 *
 * For a request whose endpoint nothing per request decides (round-robin, no canary, no health checks, no stickiness,
 * no route timeouts: nginx-assets/lua/portico/balancer.lua), the router picks the endpoint of the first attempt
 * itself, in the set_by_lua it runs anyway, and hands it here through LuaJIT's FFI: the endpoint's binary address and
 * its name ("ip:port", "[ip6]:port"), made once per endpoint when its backend's data changes. The first attempt then
 * connects without entering Lua: balancer_by_lua costs a Lua call (the chunk looked up by name, a protected call, the
 * stack set up and cleared) and lua-nginx-module's set_current_peer parses the address text and prints it back into a
 * name (ngx_parse_url, ngx_sock_ntop): ~3,200 instructions per request (e2e/bench/dataplane-cg.ts).
 *
 * Every other attempt is the wrapped balancer's (the directive wraps whatever the block's balancer is when it is
 * read, nginx's round-robin if none, so it comes after balancer_by_lua and before keepalive): retries (the Lua balancer skips the peers tried, as
 * it reads them in $upstream_addr, and learns how the handed attempt ended from ngx_http_portico_vars_peer_failure),
 * requests with no hand-off, and every request after an internal redirect (nginx clears the modules' per-request
 * contexts there, and with it a hand-off: it can never outlive the routing that made it).
 *
 * The same wrapper writes the location's forwarded headers (portico_proxy_header, ngx_http_portico_vars_proxy_headers.c)
 * into every request proxied to the block: its peers are set up once per request, right after the proxy module built
 * the request. Blocks that requests are proxied to (proxy_pass) are wrapped for that, hand-off or not.
 */

#include "ngx_http_portico_vars.h"


/* What the router handed over (the request's context of this module). */
typedef struct {
    struct sockaddr                 *sockaddr;
    socklen_t                        socklen;
    ngx_str_t                        name;
    ngx_uint_t                       more;       /* attempts allowed after the first */
    ngx_uint_t                       handed;     /* a peer waits for the request's first attempt */
    ngx_uint_t                       state;      /* how the handed attempt ended: NGX_PEER_FAILED, NGX_PEER_NEXT;
                                                    0 while it has not, or when it succeeded (no retry follows) */
    ngx_uint_t                       native;     /* handed by the native path (ngx_http_portico_vars_route.c), not by
                                                    the Lua router */
    ngx_msec_t                       timeouts[3];  /* the route's connect, send and read timeouts (0: the location's),
                                                    set by the native path only */
} ngx_http_pv_peer_ctx_t;


/* A request's balancing while the hand-off is in the chain: the wrapped balancer's data and callbacks. */
typedef struct {
    void                            *data;
    ngx_event_get_peer_pt            get;
    ngx_event_free_peer_pt           free;
#if (NGX_HTTP_SSL)
    ngx_event_set_peer_session_pt    set_session;
    ngx_event_save_peer_session_pt   save_session;
#endif
    ngx_http_pv_peer_ctx_t          *ctx;
    ngx_uint_t                       first;      /* the next attempt is the first: the handed peer */
    ngx_uint_t                       active;     /* the current attempt is the handed peer */
} ngx_http_pv_peer_data_t;


static ngx_int_t
ngx_http_pv_peer_get(ngx_peer_connection_t *pc, void *data)
{
    ngx_http_pv_peer_ctx_t   *ctx;
    ngx_http_pv_peer_data_t  *pd = data;

    if (!pd->first) {
        pd->active = 0;
        return pd->get(pc, pd->data);
    }

    ctx = pd->ctx;
    pd->first = 0;
    pd->active = 1;

    pc->sockaddr = ctx->sockaddr;
    pc->socklen = ctx->socklen;
    pc->name = &ctx->name;
    pc->cached = 0;
    pc->connection = NULL;

    return NGX_OK;
}


static void
ngx_http_pv_peer_free(ngx_peer_connection_t *pc, void *data, ngx_uint_t state)
{
    ngx_http_pv_peer_data_t  *pd = data;

    if (!pd->active) {
        pd->free(pc, pd->data, state);
        return;
    }

    pd->active = 0;
    pd->ctx->state = state;

    if (pc->tries) {
        pc->tries--;
    }
}


#if (NGX_HTTP_SSL)

/* No TLS session is kept for a handed peer (as lua-nginx-module keeps none for the peers its balancer sets). */
static ngx_int_t
ngx_http_pv_peer_set_session(ngx_peer_connection_t *pc, void *data)
{
    ngx_http_pv_peer_data_t  *pd = data;

    if (pd->active) {
        return NGX_OK;
    }

    return pd->set_session(pc, pd->data);
}


static void
ngx_http_pv_peer_save_session(ngx_peer_connection_t *pc, void *data)
{
    ngx_http_pv_peer_data_t  *pd = data;

    if (pd->active) {
        return;
    }

    pd->save_session(pc, pd->data);
}

#endif


static ngx_int_t
ngx_http_pv_peer_init_peer(ngx_http_request_t *r, ngx_http_upstream_srv_conf_t *us)
{
    ngx_http_upstream_t          *u;
    ngx_http_pv_peer_ctx_t       *ctx;
    ngx_http_pv_peer_data_t      *pd;
    ngx_http_pv_srv_conf_t       *pcf;
    ngx_http_upstream_conf_t     *ucf;

    pcf = ngx_http_conf_upstream_srv_conf(us, ngx_http_portico_vars_module);

    if (pcf->original_init_peer(r, us) != NGX_OK) {
        return NGX_ERROR;
    }

    /* The location's forwarded headers (portico_proxy_header), into the request the proxy module has just built. */
    if (ngx_http_pv_write_proxy_headers(r) != NGX_OK) {
        return NGX_ERROR;
    }

    ctx = ngx_http_get_module_ctx(r, ngx_http_portico_vars_module);
    if (ctx == NULL || !ctx->handed) {
        return NGX_OK;
    }

    /* Taken once: an upstream started again for this request (none is, without an internal redirect) balances alone. */
    ctx->handed = 0;

    pd = ngx_palloc(r->pool, sizeof(ngx_http_pv_peer_data_t));
    if (pd == NULL) {
        return NGX_ERROR;
    }

    u = r->upstream;
    pd->data = u->peer.data;
    pd->get = u->peer.get;
    pd->free = u->peer.free;
#if (NGX_HTTP_SSL)
    pd->set_session = u->peer.set_session;
    pd->save_session = u->peer.save_session;
#endif
    pd->ctx = ctx;
    pd->first = 1;
    pd->active = 0;

    u->peer.data = pd;
    u->peer.get = ngx_http_pv_peer_get;
    u->peer.free = ngx_http_pv_peer_free;
#if (NGX_HTTP_SSL)
    u->peer.set_session = ngx_http_pv_peer_set_session;
    u->peer.save_session = ngx_http_pv_peer_save_session;
#endif

    /* The retries the Lua balancer would have allowed (set_more_tries); nginx caps the sum at proxy_next_upstream_tries
     * right after this, as set_more_tries did. */
    u->peer.tries += ctx->more;

    /* The route's timeouts (all three or none: ngx_http_portico_vars_route_path), for every attempt of the request
     * (as the Lua balancer's set_timeouts on its first one): on a copy of the location's upstream settings, which
     * nginx reads from u->conf when it connects, sends and waits. */
    if (ctx->timeouts[0]) {
        ucf = ngx_palloc(r->pool, sizeof(ngx_http_upstream_conf_t));
        if (ucf == NULL) {
            return NGX_ERROR;
        }
        ngx_memcpy(ucf, u->conf, sizeof(ngx_http_upstream_conf_t));
        ucf->connect_timeout = ctx->timeouts[0];
        ucf->send_timeout = ctx->timeouts[1];
        ucf->read_timeout = ctx->timeouts[2];
        u->conf = ucf;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_pv_peer_init_upstream(ngx_conf_t *cf, ngx_http_upstream_srv_conf_t *us)
{
    ngx_http_pv_srv_conf_t  *pcf;

    pcf = ngx_http_conf_upstream_srv_conf(us, ngx_http_portico_vars_module);

    if (pcf->original_init_upstream(cf, us) != NGX_OK) {
        return NGX_ERROR;
    }

    pcf->original_init_peer = us->peer.init;
    us->peer.init = ngx_http_pv_peer_init_peer;

    return NGX_OK;
}


char *
ngx_http_pv_peer_handoff(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_pv_srv_conf_t   *pcf = conf;
    ngx_http_upstream_srv_conf_t  *uscf;

    if (pcf->original_init_upstream) {
        return "is duplicate";
    }

    uscf = ngx_http_conf_get_module_srv_conf(cf, ngx_http_upstream_module);

    /* No balancer directive before it: nginx's round-robin over the block's servers (as the keepalive module does). */
    pcf->original_init_upstream = uscf->peer.init_upstream ? uscf->peer.init_upstream
                                                           : ngx_http_upstream_init_round_robin;
    uscf->peer.init_upstream = ngx_http_pv_peer_init_upstream;

    return NGX_CONF_OK;
}


/*
 * For router.lua and balancer.lua, through LuaJIT's FFI.
 */

/* An endpoint's binary address (into sa, room for an ngx_sockaddr_t) and nginx's name for it ("ip:port" or
 * "[ip6]:port", into name, room for NGX_SOCKADDR_STRLEN bytes; *name_len its length), made once per endpoint.
 * Returns the address's length, 0 when ip is not an IPv4 or IPv6 address or port is not 1-65535. */
int
ngx_http_portico_vars_peer_addr(const u_char *ip, size_t len, int port, u_char *sa, u_char *name, size_t *name_len)
{
    in_addr_t             a4;
    socklen_t             socklen;
    ngx_sockaddr_t       *s = (ngx_sockaddr_t *) sa;
#if (NGX_HAVE_INET6)
    u_char                a6[16];
#endif

    if (port < 1 || port > 65535 || len == 0 || len > NGX_INET6_ADDRSTRLEN) {
        return 0;
    }

    ngx_memzero(s, sizeof(ngx_sockaddr_t));

    a4 = ngx_inet_addr((u_char *) ip, len);

    if (a4 != INADDR_NONE) {
        s->sockaddr_in.sin_family = AF_INET;
        s->sockaddr_in.sin_port = htons((in_port_t) port);
        s->sockaddr_in.sin_addr.s_addr = a4;
        socklen = sizeof(struct sockaddr_in);

#if (NGX_HAVE_INET6)
    } else if (ngx_inet6_addr((u_char *) ip, len, a6) == NGX_OK) {
        s->sockaddr_in6.sin6_family = AF_INET6;
        s->sockaddr_in6.sin6_port = htons((in_port_t) port);
        ngx_memcpy(s->sockaddr_in6.sin6_addr.s6_addr, a6, 16);
        socklen = sizeof(struct sockaddr_in6);
#endif

    } else {
        return 0;
    }

    *name_len = ngx_sock_ntop(&s->sockaddr, socklen, name, NGX_SOCKADDR_STRLEN, 1);
    return (int) socklen;
}


/* Hands the first attempt of the request's upstream to that endpoint (sa, name: as ngx_http_portico_vars_peer_addr
 * made them; copied), with `more` retries allowed after it. 0, or -1 (bad length, no memory). */
int
ngx_http_portico_vars_peer_handoff(ngx_http_request_t *r, const u_char *sa, size_t salen, const u_char *name,
    size_t name_len, int more)
{
    u_char                  *p;
    ngx_http_pv_peer_ctx_t  *ctx;

    if (salen == 0 || salen > sizeof(ngx_sockaddr_t) || name_len == 0 || name_len > NGX_SOCKADDR_STRLEN
        || more < 0)
    {
        return -1;
    }

    ctx = ngx_http_get_module_ctx(r, ngx_http_portico_vars_module);
    if (ctx == NULL) {
        ctx = ngx_palloc(r->pool, sizeof(ngx_http_pv_peer_ctx_t) + sizeof(ngx_sockaddr_t) + NGX_SOCKADDR_STRLEN);
        if (ctx == NULL) {
            return -1;
        }
        ngx_http_set_ctx(r, ctx, ngx_http_portico_vars_module);
    }

    p = (u_char *) ctx + sizeof(ngx_http_pv_peer_ctx_t);
    ngx_memcpy(p, sa, salen);
    ctx->sockaddr = (struct sockaddr *) p;
    ctx->socklen = (socklen_t) salen;

    p += sizeof(ngx_sockaddr_t);
    ngx_memcpy(p, name, name_len);
    ctx->name.data = p;
    ctx->name.len = name_len;

    ctx->more = (ngx_uint_t) more;
    ctx->handed = 1;
    ctx->state = 0;
    ctx->native = 0;
    ngx_memzero(ctx->timeouts, sizeof(ctx->timeouts));
    return 0;
}


/* The native path's hand-off (ngx_http_portico_vars_route.c): the same, marked as made without the Lua router, with
 * the route's connect, send and read timeouts (ms, 0 for the location's own). */
ngx_int_t
ngx_http_pv_peer_handoff_native(ngx_http_request_t *r, struct sockaddr *sa, socklen_t salen, ngx_str_t *name,
    ngx_uint_t more, ngx_msec_t *timeouts)
{
    ngx_http_pv_peer_ctx_t  *ctx;

    if (ngx_http_portico_vars_peer_handoff(r, (u_char *) sa, salen, name->data, name->len, (int) more) != 0) {
        return NGX_ERROR;
    }

    ctx = ngx_http_get_module_ctx(r, ngx_http_portico_vars_module);
    ctx->native = 1;
    ngx_memcpy(ctx->timeouts, timeouts, sizeof(ctx->timeouts));
    return NGX_OK;
}


/* Whether the request's routing (since its last internal redirect, which drops the context) was the native path's:
 * then the Lua router did not run, and what it last handed to the Lua balancer belongs to another request. */
int
ngx_http_portico_vars_peer_native(ngx_http_request_t *r)
{
    ngx_http_pv_peer_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_portico_vars_module);
    return (ctx != NULL && ctx->native) ? 1 : 0;
}


/* Drops a hand-off not yet taken (something chose another backend after the router: errors.lua). */
void
ngx_http_portico_vars_peer_forget(ngx_http_request_t *r)
{
    ngx_http_pv_peer_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_portico_vars_module);
    if (ctx) {
        ctx->handed = 0;
    }
}


/* How the handed attempt ended, for the Lua balancer's retry after it (as lua-nginx-module's get_last_failure says it
 * for the attempts its balancer set): NGX_PEER_FAILED (4) or NGX_PEER_NEXT (2), and in *status the HTTP status of the
 * attempt before the current one (0 if none); 0 when the handed attempt has not ended (or there was none). */
int
ngx_http_portico_vars_peer_failure(ngx_http_request_t *r, int *status)
{
    ngx_http_pv_peer_ctx_t     *ctx;
    ngx_http_upstream_state_t  *state;

    *status = 0;

    ctx = ngx_http_get_module_ctx(r, ngx_http_portico_vars_module);
    if (ctx == NULL || ctx->state == 0) {
        return 0;
    }

    if (r->upstream_states && r->upstream_states->nelts > 1) {
        state = r->upstream_states->elts;
        *status = (int) state[r->upstream_states->nelts - 2].status;
    }

    return (int) ctx->state;
}
