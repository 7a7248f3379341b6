/*
 * Portico's h2c listeners: HTTP/1.x and HTTP/2 with prior knowledge ("h2c", what gRPC clients speak in plaintext)
 * on the same plaintext port.
 *
 * nginx 1.22 makes a plaintext "listen ... http2" HTTP/2 only: ngx_http_init_connection() gives such a connection
 * ngx_http_v2_init() as its read handler, and the HTTP/2 state machine closes a connection whose first bytes are
 * not the connection preface. A Gateway API listener serves HTTPRoutes (HTTP/1.x clients) and GRPCRoutes (h2c
 * clients) on one port, so for the ports named here the listen lines stay without "http2" and this module decides
 * per connection, from the first bytes the client sends:
 *
 *   - the listening sockets of those ports get a connection handler of their own (set once, in init_module, on the
 *     cycle's ngx_listening_t entries, which the workers inherit when they are forked). It runs nginx's own
 *     ngx_http_init_connection() (server lookup, log context, client_header_timeout timer, read event) and then
 *     puts a sniffing read handler in place of nginx's HTTP/1 one (ngx_http_wait_request_handler, which is
 *     static: it is taken from the connection's read event, where init_connection has just put it);
 *   - the sniffing handler looks at the first bytes with recv(MSG_PEEK), so they stay in the socket and whichever
 *     handler it chooses reads the connection from its start, exactly as it would on a port of its own:
 *       the 24-byte preface "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"      -> ngx_http_v2_init(), nginx's HTTP/2;
 *       a strict prefix of it (fewer than 24 bytes so far)     -> wait for more (edge-triggered events only);
 *       anything else, end of stream, a timeout                -> nginx's HTTP/1 handler, which answers, logs or
 *                                                                 closes as it always has.
 *     HTTP/1 cannot be mistaken for HTTP/2: the decision waits until the bytes differ from the preface or all 24
 *     are there, and the preface itself is no HTTP/1 request nginx serves (its version is 2.0: a 400 on a port of
 *     its own). Ordinary requests differ at their second byte ("GET", "POST"); "PRIX / HTTP/1.1" at its fourth.
 *
 * ngx_http_v2_init() depends on nothing that the "http2" listen flag sets up: it reads the HTTP/2 module's main and
 * server configuration of the connection's default server (created for every http{} block and server{}, whether
 * or not a listen has "http2") and allocates the shared receive buffer on first use; the flag itself
 * (hc->addr_conf->http2) is read only by ngx_http_init_connection() and the TLS ALPN callback.
 *
 * PROXY protocol ("listen ... proxy_protocol"): the header comes first, so the preface is looked for right after
 * it; both of nginx's handlers read the header themselves (ngx_http_wait_request_handler, and the HTTP/2 state
 * ngx_http_v2_state_proxy_protocol, which nginx has for "listen ... http2 proxy_protocol"). A header that is not
 * one goes to the HTTP/1 handler, which rejects it as before. The decision waits for the whole header, so either
 * handler finds it complete in its first read. A version 2 header too long to look past (PH_PEEK_MAX) is left to
 * the HTTP/1 handler.
 *
 * TLS listeners are not touched: the port list may not name a port with an "ssl" or "http2" listen (HTTP/2 over
 * TLS is negotiated by ALPN), and a connection whose server turned TLS on anyway (the old "ssl on;") keeps nginx's
 * handshake handler.
 *
 * Directive:
 *   portico_h2c_ports port ...;     http: the plaintext ports whose connections may be HTTP/1.x or h2c
 */

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>
#include <ngx_http.h>


#if !(NGX_HTTP_V2)
#error "portico_h2c hands connections to nginx's HTTP/2 module: configure nginx --with-http_v2_module"
#endif


#define PH_PREFACE_LEN  24

/* The most the sniffing handler peeks at once (on its stack): a PROXY protocol header and the preface. A version 1
 * header has at most NGX_PROXY_PROTOCOL_MAX_HEADER (107) bytes; version 2 ones are 16 bytes and what they announce,
 * in practice well under this (addresses, and a few TLVs from cloud load balancers). */
#define PH_PEEK_MAX     1024

static const u_char  ph_preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
static const u_char  ph_proxy_v2_signature[] = "\r\n\r\n\0\r\nQUIT\n";


typedef struct {
    ngx_array_t         *ports;     /* in_port_t, host order */
    ngx_str_t            file;      /* where the directive is, for the errors found once the listens are known */
    ngx_uint_t           line;
} ngx_http_ph_main_conf_t;


static void *ngx_http_ph_create_main_conf(ngx_conf_t *cf);
static char *ngx_http_ph_ports(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static ngx_int_t ngx_http_ph_check_listens(ngx_conf_t *cf);
static ngx_int_t ngx_http_ph_init_module(ngx_cycle_t *cycle);
static void ngx_http_ph_init_connection(ngx_connection_t *c);
static void ngx_http_ph_sniff(ngx_event_t *rev);
static ngx_int_t ngx_http_ph_proxy_header(u_char *p, size_t n, size_t *len);


static ngx_command_t  ngx_http_ph_commands[] = {

    { ngx_string("portico_h2c_ports"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_1MORE,
      ngx_http_ph_ports,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

      ngx_null_command
};


static ngx_http_module_t  ngx_http_portico_h2c_module_ctx = {
    NULL,                                  /* preconfiguration */
    ngx_http_ph_check_listens,             /* postconfiguration */
    ngx_http_ph_create_main_conf,          /* create main configuration */
    NULL,                                  /* init main configuration */
    NULL,                                  /* create server configuration */
    NULL,                                  /* merge server configuration */
    NULL,                                  /* create location configuration */
    NULL                                   /* merge location configuration */
};


ngx_module_t  ngx_http_portico_h2c_module = {
    NGX_MODULE_V1,
    &ngx_http_portico_h2c_module_ctx,      /* module context */
    ngx_http_ph_commands,                  /* module directives */
    NGX_HTTP_MODULE,                       /* module type */
    NULL,                                  /* init master */
    ngx_http_ph_init_module,               /* init module */
    NULL,                                  /* init process */
    NULL,                                  /* init thread */
    NULL,                                  /* exit thread */
    NULL,                                  /* exit process */
    NULL,                                  /* exit master */
    NGX_MODULE_V1_PADDING
};


/*
 * nginx's HTTP/1 read handler (ngx_http_wait_request_handler, static in ngx_http_request.c), as
 * ngx_http_init_connection() leaves it on a plaintext connection without "http2". It is one function for the
 * whole process (and a worker runs one thread), so it is kept here rather than on every connection.
 */
static ngx_event_handler_pt  ngx_http_ph_http1_handler;


/* ---- configuration ---- */

static void *
ngx_http_ph_create_main_conf(ngx_conf_t *cf)
{
    /* zeroed: no ports until the directive names some */
    return ngx_pcalloc(cf->pool, sizeof(ngx_http_ph_main_conf_t));
}


static char *
ngx_http_ph_ports(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_ph_main_conf_t *pmcf = conf;

    ngx_int_t    n;
    ngx_str_t   *value;
    ngx_uint_t   i, j;
    in_port_t   *port, *seen;

    if (pmcf->ports != NULL) {
        return "is duplicate";
    }

    pmcf->ports = ngx_array_create(cf->pool, cf->args->nelts - 1, sizeof(in_port_t));
    if (pmcf->ports == NULL) {
        return NGX_CONF_ERROR;
    }

    value = cf->args->elts;

    for (i = 1; i < cf->args->nelts; i++) {
        n = ngx_atoi(value[i].data, value[i].len);

        if (n < 1 || n > 65535) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid port \"%V\" in \"%V\": a number from 1 to 65535", &value[i], &cmd->name);
            return NGX_CONF_ERROR;
        }

        seen = pmcf->ports->elts;

        for (j = 0; j < pmcf->ports->nelts; j++) {
            if (seen[j] == (in_port_t) n) {
                ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "port %i is named twice in \"%V\"", n, &cmd->name);
                return NGX_CONF_ERROR;
            }
        }

        port = ngx_array_push(pmcf->ports);
        if (port == NULL) {
            return NGX_CONF_ERROR;
        }

        *port = (in_port_t) n;
    }

    pmcf->file = cf->conf_file->file.name;
    pmcf->line = cf->conf_file->line;

    return NGX_CONF_OK;
}


/*
 * Each named port must be one this http{} block listens on over TCP/IP, and none of its listens may have "ssl" or
 * "http2". Checked here, at the end of the http{} block, where every listen is known (cmcf->ports; the default
 * listen of a server without one is added when the servers are merged, before this runs), so that nginx -t and a
 * reload refuse the configuration. init_module must not refuse anything: its failure ends the master process.
 */
static ngx_int_t
ngx_http_ph_check_listens(ngx_conf_t *cf)
{
    ngx_uint_t                  i, j, k, found;
    in_port_t                  *want;
    ngx_http_conf_port_t       *port;
    ngx_http_conf_addr_t       *addr;
    ngx_http_ph_main_conf_t    *pmcf;
    ngx_http_core_main_conf_t  *cmcf;

    pmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_portico_h2c_module);

    if (pmcf->ports == NULL) {
        return NGX_OK;
    }

    cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module);

    want = pmcf->ports->elts;

    for (i = 0; i < pmcf->ports->nelts; i++) {
        found = 0;

        port = cmcf->ports ? cmcf->ports->elts : NULL;

        for (j = 0; port && j < cmcf->ports->nelts; j++) {
            if (port[j].port != want[i] || (port[j].family != AF_INET
#if (NGX_HAVE_INET6)
                                            && port[j].family != AF_INET6
#endif
                                           ))
            {
                continue;
            }

            found = 1;

            addr = port[j].addrs.elts;

            for (k = 0; k < port[j].addrs.nelts; k++) {
                if (addr[k].opt.ssl) {
                    ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                                  "portico_h2c_ports: port %d listens with \"ssl\" on %V; HTTP/2 over TLS is "
                                  "negotiated by ALPN (listen ... ssl http2), name only plaintext ports in %V:%ui",
                                  (int) want[i], &addr[k].opt.addr_text, &pmcf->file, pmcf->line);
                    return NGX_ERROR;
                }

                if (addr[k].opt.http2) {
                    ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                                  "portico_h2c_ports: port %d listens with \"http2\" on %V, which makes it HTTP/2 "
                                  "only; drop \"http2\" from its listen to serve HTTP/1.x and HTTP/2 there in %V:%ui",
                                  (int) want[i], &addr[k].opt.addr_text, &pmcf->file, pmcf->line);
                    return NGX_ERROR;
                }
            }
        }

        if (!found) {
            ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                          "portico_h2c_ports: no server of this http{} block listens on port %d in %V:%ui",
                          (int) want[i], &pmcf->file, pmcf->line);
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/*
 * Runs in the master (and in nginx -t) once the cycle's listening sockets exist: every HTTP listening socket
 * (its handler is ngx_http_init_connection) on a named port gets ngx_http_ph_init_connection instead, the reuseport
 * copies of a socket (one per worker, cloned while the configuration was read) included. A reload builds a new
 * cycle with fresh ngx_listening_t entries (the handler set by the http module again) and runs this again for it,
 * so a port dropped from the list is plain again in the new workers; the old workers keep the old cycle.
 * Nothing here can fail: an init_module error ends the master process.
 */
static ngx_int_t
ngx_http_ph_init_module(ngx_cycle_t *cycle)
{
    in_port_t                 p, *want;
    ngx_uint_t                i, j;
    ngx_listening_t          *ls;
    ngx_http_ph_main_conf_t  *pmcf;

    pmcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_portico_h2c_module);

    if (pmcf == NULL || pmcf->ports == NULL) {
        return NGX_OK;
    }

    want = pmcf->ports->elts;
    ls = cycle->listening.elts;

    for (i = 0; i < cycle->listening.nelts; i++) {

        if (ls[i].handler != ngx_http_init_connection || ls[i].type != SOCK_STREAM) {
            continue;
        }

        if (ls[i].sockaddr->sa_family != AF_INET
#if (NGX_HAVE_INET6)
            && ls[i].sockaddr->sa_family != AF_INET6
#endif
           )
        {
            continue;
        }

        p = ngx_inet_get_port(ls[i].sockaddr);

        for (j = 0; j < pmcf->ports->nelts; j++) {
            if (want[j] == p) {
                ls[i].handler = ngx_http_ph_init_connection;

                ngx_log_debug2(NGX_LOG_DEBUG_HTTP, cycle->log, 0,
                               "portico h2c: %V (worker %ui) serves HTTP/1.x and HTTP/2 prior knowledge",
                               &ls[i].addr_text, ls[i].worker);
                break;
            }
        }
    }

    return NGX_OK;
}


/* ---- connections ---- */

/*
 * A new connection on a named port: nginx's own initialisation, then the sniffing handler in place of the HTTP/1
 * one.
 *
 * Data that is already there when the connection is accepted ("listen ... deferred": the kernel accepts only once
 * the client has sent something, and nginx marks the read event ready) would make ngx_http_init_connection() run
 * the HTTP/1 handler before it returns (or post it, with accept_mutex): it would read the bytes the sniffing
 * handler has to see first. So the ready flag is cleared for the call, which makes init_connection take its path
 * for a connection without data (client_header_timeout timer, reusable, read event registered), and put back after
 * it, when the connection's handler (now the sniffing one) is run or posted as init_connection would have. The
 * event registered meanwhile may report the same data once more later; every nginx read handler takes such a
 * wake-up without data in its stride (EAGAIN).
 */
static void
ngx_http_ph_init_connection(ngx_connection_t *c)
{
    ngx_uint_t              ready;
    ngx_event_t            *rev;
    ngx_http_connection_t  *hc;

    rev = c->read;

    ready = rev->ready;
    rev->ready = 0;

    ngx_http_init_connection(c);

    /*
     * init_connection closes the connection when it fails (an allocation, getsockname()): ngx_close_connection()
     * leaves fd at -1 in the connection slot, which nothing else can take meanwhile (a worker runs one thread).
     */
    if (c->fd == (ngx_socket_t) -1) {
        return;
    }

    hc = c->data;

    if (!hc->ssl && !hc->addr_conf->http2) {
        ngx_http_ph_http1_handler = rev->handler;
        rev->handler = ngx_http_ph_sniff;
    }

    if (ready) {
        rev->ready = 1;

        if (ngx_use_accept_mutex) {
            ngx_post_event(rev, &ngx_posted_events);
            return;
        }

        rev->handler(rev);
    }
}


/*
 * The read handler of a connection until its first bytes tell HTTP/1.x from HTTP/2 prior knowledge. It keeps no
 * state of its own (the bytes stay in the socket): each call peeks from the start again, so the connection can be
 * closed at any point (timeout, client gone, a worker short of connections) with nothing to free.
 */
static void
ngx_http_ph_sniff(ngx_event_t *rev)
{
    u_char                     buf[PH_PEEK_MAX];
    size_t                     want, skip, got;
    ssize_t                    n;
    ngx_err_t                  err;
    ngx_int_t                  rc;
    ngx_connection_t          *c;
    ngx_http_connection_t     *hc;
    ngx_http_core_srv_conf_t  *cscf;

    c = rev->data;
    hc = c->data;

    /*
     * Only a readiness notification (the event loop sets rev->ready before it runs a read handler, and
     * ngx_http_ph_init_connection() sets it back for data that came with the connection) is looked at. The timer
     * (client_header_timeout, set by init_connection), and nginx closing reusable connections when a worker runs
     * short of them (ngx_drain_connections() sets c->close and calls the read handler of a connection that has
     * no notification pending), go to the HTTP/1 handler, which closes the connection (logging the timeout) as
     * it does for any HTTP/1 connection still waiting for its request.
     *
     * c->close itself is not read: Debian's nginx 1.22.1 (1.22.1-9+deb12u11) has a bit more in ngx_connection_t
     * than the upstream sources this module is compiled with ("pipeline", inserted before "idle"), so a module
     * built from those reads every bit from c->idle on one place off (c->close would be nginx's c->reusable).
     * This module reads no ngx_connection_t bit field at all.
     */
    if (rev->timedout || !rev->ready) {
        goto http1;
    }

    want = hc->proxy_protocol ? NGX_PROXY_PROTOCOL_MAX_HEADER + PH_PREFACE_LEN : PH_PREFACE_LEN;

again:

    n = recv(c->fd, (char *) buf, want, MSG_PEEK);

    if (n == -1) {
        err = ngx_socket_errno;

        if (err == NGX_EINTR) {
            goto again;
        }

        if (err == NGX_EAGAIN) {
            goto wait;
        }

        /* A socket error is reported once: the HTTP/1 handler's own recv() would not see it again. */
        ngx_connection_error(c, err, "recv() failed");
        ngx_http_close_connection(c);
        return;
    }

    if (n == 0) {
        /* The client closed before sending anything: the HTTP/1 handler reads the end and closes quietly. */
        goto http1;
    }

    got = (size_t) n;
    skip = 0;

    if (hc->proxy_protocol) {
        rc = ngx_http_ph_proxy_header(buf, got, &skip);

        if (rc == NGX_DECLINED) {
            goto http1;
        }

        if (rc == NGX_AGAIN) {
            goto more;
        }

        if (skip + PH_PREFACE_LEN > want) {
            if (skip + PH_PREFACE_LEN > sizeof(buf)) {
                ngx_log_debug1(NGX_LOG_DEBUG_HTTP, c->log, 0,
                               "portico h2c: a %uz-byte PROXY header is too long to look past: HTTP/1", skip);
                goto http1;
            }

            want = skip + PH_PREFACE_LEN;
            goto again;
        }

        if (skip > got) {
            goto more;
        }
    }

    if (ngx_memcmp(buf + skip, ph_preface, ngx_min(got - skip, PH_PREFACE_LEN)) != 0) {
        goto http1;
    }

    if (got - skip < PH_PREFACE_LEN) {
        goto more;
    }

    ngx_log_debug0(NGX_LOG_DEBUG_HTTP, c->log, 0, "portico h2c: HTTP/2 connection preface: HTTP/2");

    ngx_http_v2_init(rev);
    return;

more:

    /*
     * What arrived so far is the start of a PROXY header or of the preface. The rest comes as new data, which an
     * edge-triggered event method (epoll, kqueue: NGX_USE_CLEAR_EVENT) reports as a new event. A level-triggered
     * one would report the bytes already there again at once, a busy loop: there the connection is HTTP/1, as on
     * a port of its own. A client that has finished sending (pending_eof) sends no more: HTTP/1 reads what there
     * is and closes.
     */
    if (!(ngx_event_flags & NGX_USE_CLEAR_EVENT) || rev->pending_eof) {
        goto http1;
    }

    ngx_log_debug1(NGX_LOG_DEBUG_HTTP, c->log, 0,
                   "portico h2c: %uz bytes so far, waiting for more to tell HTTP/2 from HTTP/1", got);

wait:

    rev->ready = 0;

    if (!rev->timer_set) {
        cscf = ngx_http_get_module_srv_conf(hc->conf_ctx, ngx_http_core_module);
        ngx_add_timer(rev, cscf->client_header_timeout);
    }

    if (ngx_handle_read_event(rev, 0) != NGX_OK) {
        ngx_http_close_connection(c);
    }

    return;

http1:

    ngx_log_debug0(NGX_LOG_DEBUG_HTTP, c->log, 0, "portico h2c: HTTP/1");

    rev->handler = ngx_http_ph_http1_handler;
    rev->handler(rev);
}


/*
 * The length of the PROXY protocol header at the start of p[0..n) (n > 0): NGX_OK with *len set (a version 2
 * header may be longer than what has arrived), NGX_AGAIN while what arrived is the start of a header whose length
 * is not known yet, NGX_DECLINED when it is no PROXY header (nginx's own reader rejects it).
 */
static ngx_int_t
ngx_http_ph_proxy_header(u_char *p, size_t n, size_t *len)
{
    size_t  i, sig;

    /* version 2: a 12-byte signature, version and command, family, then the big-endian length of the rest */
    sig = sizeof(ph_proxy_v2_signature) - 1;

    if (ngx_memcmp(p, ph_proxy_v2_signature, ngx_min(n, sig)) == 0) {
        if (n < 16) {
            return NGX_AGAIN;
        }

        *len = 16 + ((size_t) p[14] << 8 | p[15]);
        return NGX_OK;
    }

    /* version 1: a text line starting "PROXY " and ending with CRLF, at most 107 bytes */
    if (ngx_memcmp(p, "PROXY ", ngx_min(n, 6)) != 0) {
        return NGX_DECLINED;
    }

    for (i = 0; i < n && i < NGX_PROXY_PROTOCOL_MAX_HEADER; i++) {
        if (p[i] == LF) {
            *len = i + 1;
            return NGX_OK;
        }
    }

    return (n < NGX_PROXY_PROTOCOL_MAX_HEADER) ? NGX_AGAIN : NGX_DECLINED;
}
