/*
 * The forwarded headers of a proxied request, written by Portico's variables module (part of the peer wrapper,
 * ngx_http_portico_vars_peer.c):
 *
 *   portico_proxy_header X-Forwarded-For $remote_addr;      (http, server, location; one per header)
 *   portico_proxy_header off;                               (none here: a location with proxy_set_header lists of its own)
 *   proxy_set_header X-Forwarded-For "";                    (the client's own header of that name is not passed)
 *   upstream portico_upstream { ...; portico_peer_handoff; ... }
 *
 * nginx's proxy_set_header runs a small script per header on every request, three times over (the lengths, then the
 * lengths again to skip an empty value, then the copy): ~300 instructions per header with one variable, ~480 for
 * one of this module's derived variables, eleven headers Portico sends as ingress-nginx does (e2e/bench/
 * dataplane-cg.ts). Here each value is one variable read by index, and the lines are written once: after the proxy
 * module built the request (its header block in the first buffer of the request chain, ending with the empty line),
 * when the upstream's peers are set up for it, which nginx does once per proxied request, before the first attempt.
 * The header block is copied once with these lines before its empty line; a retry sends the same block again.
 *
 * As proxy_set_header: inherited by a level that names none, an empty value sends no header. Stricter: a value
 * holding a line break or NUL (nothing nginx accepts from a client can; a value Lua set could) is never sent — the
 * request fails with 500 and an error log line instead of carrying a header it did not mean. A request chain that is
 * not HTTP/1 text (another protocol's request through a wrapped upstream, which Portico never renders) fails the same.
 */

#include "ngx_http_portico_vars.h"


#define NGX_HTTP_PV_MAX_PROXY_HEADERS  32


typedef struct {
    ngx_str_t    name;
    ngx_int_t    index;
} ngx_http_pv_proxy_header_t;


void *
ngx_http_pv_create_loc_conf(ngx_conf_t *cf)
{
    ngx_http_pv_loc_conf_t  *lcf;

    lcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_pv_loc_conf_t));
    if (lcf == NULL) {
        return NULL;
    }

    lcf->proxy_headers = NGX_CONF_UNSET_PTR;
    return lcf;
}


char *
ngx_http_pv_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
    ngx_http_pv_loc_conf_t  *prev = parent;
    ngx_http_pv_loc_conf_t  *conf = child;

    ngx_conf_merge_ptr_value(conf->proxy_headers, prev->proxy_headers, NULL);
    return NGX_CONF_OK;
}


/* A header name as HTTP defines a token (RFC 9110 tchar). */
static ngx_uint_t
ngx_http_pv_token(ngx_str_t *s)
{
    u_char      c;
    ngx_uint_t  i;

    if (s->len == 0) {
        return 0;
    }

    for (i = 0; i < s->len; i++) {
        c = s->data[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
            continue;
        }
        if (ngx_strlchr((u_char *) "!#$%&'*+-.^_`|~", (u_char *) "!#$%&'*+-.^_`|~" + 15, c) == NULL) {
            return 0;
        }
    }

    return 1;
}


char *
ngx_http_pv_proxy_header(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_pv_loc_conf_t  *lcf = conf;

    ngx_str_t                   *value, name;
    ngx_http_pv_proxy_header_t  *h;

    value = cf->args->elts;

    if (cf->args->nelts == 2) {
        if (value[1].len != 3 || ngx_strncmp(value[1].data, "off", 3) != 0) {
            return "takes a header name and one variable (\"$name\"), or \"off\"";
        }
        if (lcf->proxy_headers != NGX_CONF_UNSET_PTR) {
            return "\"off\" is not alone at this level";
        }
        lcf->proxy_headers = NULL;
        return NGX_CONF_OK;
    }

    if (lcf->proxy_headers == NULL) {
        return "\"off\" is not alone at this level";
    }

    if (!ngx_http_pv_token(&value[1])) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "\"%V\" is not a header name", &value[1]);
        return NGX_CONF_ERROR;
    }

    if (ngx_http_pv_name(cf, &value[2], &name) != NGX_OK) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "\"%V\": the value is one variable (\"$name\")", &value[2]);
        return NGX_CONF_ERROR;
    }

    if (lcf->proxy_headers == NGX_CONF_UNSET_PTR) {
        lcf->proxy_headers = ngx_array_create(cf->pool, 8, sizeof(ngx_http_pv_proxy_header_t));
        if (lcf->proxy_headers == NULL) {
            return NGX_CONF_ERROR;
        }
    }

    if (lcf->proxy_headers->nelts == NGX_HTTP_PV_MAX_PROXY_HEADERS) {
        return "names more headers than 32";
    }

    h = ngx_array_push(lcf->proxy_headers);
    if (h == NULL) {
        return NGX_CONF_ERROR;
    }

    h->name = value[1];
    h->index = ngx_http_get_variable_index(cf, &name);
    if (h->index == NGX_ERROR) {
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


/* Whether a value holds CR, LF or NUL: a word at a time (exact for "any such byte"), the tail byte by byte. */
static ngx_uint_t
ngx_http_pv_line_break(u_char *p, size_t len)
{
    uint64_t  x;
    u_char   *end = p + len;

    for ( /* void */ ; end - p >= 8; p += 8) {
        ngx_memcpy(&x, p, 8);
        if (ngx_http_pv_zero_byte(x) | ngx_http_pv_zero_byte(x ^ (NGX_HTTP_PV_ONES * '\r'))
            | ngx_http_pv_zero_byte(x ^ (NGX_HTTP_PV_ONES * '\n')))
        {
            return 1;
        }
    }

    for ( /* void */ ; p < end; p++) {
        if (*p == '\r' || *p == '\n' || *p == '\0') {
            return 1;
        }
    }

    return 0;
}


ngx_int_t
ngx_http_pv_write_proxy_headers(ngx_http_request_t *r)
{
    u_char                      *p, *start, *end, *at, *eol;
    size_t                       len;
    ngx_buf_t                   *b;
    ngx_uint_t                   i, n;
    ngx_chain_t                 *cl;
    ngx_http_pv_loc_conf_t      *lcf;
    ngx_http_variable_value_t   *vv[NGX_HTTP_PV_MAX_PROXY_HEADERS];
    ngx_http_pv_proxy_header_t  *h;

    lcf = ngx_http_get_module_loc_conf(r, ngx_http_portico_vars_module);
    if (lcf->proxy_headers == NULL || lcf->proxy_headers->nelts == 0) {
        return NGX_OK;
    }

    h = lcf->proxy_headers->elts;
    n = lcf->proxy_headers->nelts;
    len = 0;

    for (i = 0; i < n; i++) {
        vv[i] = ngx_http_get_flushed_variable(r, h[i].index);
        if (vv[i] == NULL || vv[i]->not_found || vv[i]->len == 0) {
            vv[i] = NULL;
            continue;
        }
        if (ngx_http_pv_line_break(vv[i]->data, vv[i]->len)) {
            ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                          "portico: the value of the proxied header \"%V\" holds a line break or NUL: the request is "
                          "not proxied", &h[i].name);
            return NGX_ERROR;
        }
        len += h[i].name.len + sizeof(": ") - 1 + vv[i]->len + sizeof(CRLF) - 1;
    }

    if (len == 0) {
        return NGX_OK;
    }

    /* The proxy module's header block: the first buffer, in memory, "METHOD URI HTTP/1.x" CRLF ... CRLF CRLF (a
     * body proxy_set_body wrote may follow it in the same buffer). */
    cl = r->upstream->request_bufs;
    b = cl ? cl->buf : NULL;
    if (b == NULL || !ngx_buf_in_memory_only(b) || b->pos != b->start) {
        goto not_http1;
    }

    start = b->pos;
    end = b->last;
    eol = ngx_strlchr(start, end, LF);
    if (eol == NULL || eol - start < (ssize_t) sizeof(" HTTP/1.x\r") - 1 || eol[-1] != CR
        || ngx_strncmp(eol - 9, "HTTP/1.", 7) != 0)
    {
        goto not_http1;
    }

    at = memmem(eol - 1, end - (eol - 1), CRLF CRLF, 4);
    if (at == NULL) {
        goto not_http1;
    }
    at += 2;    /* the empty line */

    p = ngx_pnalloc(r->pool, (end - start) + len);
    if (p == NULL) {
        return NGX_ERROR;
    }

    b->start = p;
    b->pos = p;
    p = ngx_cpymem(p, start, at - start);

    for (i = 0; i < n; i++) {
        if (vv[i] == NULL) {
            continue;
        }
        p = ngx_cpymem(p, h[i].name.data, h[i].name.len);
        *p++ = ':'; *p++ = ' ';
        p = ngx_cpymem(p, vv[i]->data, vv[i]->len);
        *p++ = CR; *p++ = LF;
    }

    p = ngx_cpymem(p, at, end - at);
    b->last = p;
    b->end = p;

    return NGX_OK;

not_http1:

    ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                  "portico: portico_proxy_header needs an HTTP/1 request built by proxy_pass: the request is not "
                  "proxied");
    return NGX_ERROR;
}
