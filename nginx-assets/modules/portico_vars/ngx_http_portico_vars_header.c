/*
 * A response header whose value is a variable, added only when that variable is not empty (part of Portico's
 * variables module):
 *
 *   portico_header_if_set <name> $variable;   (server level)
 *
 * on every response of the server's main requests, whatever the status (as add_header ... always), the value as the
 * variable holds it then, replacing a header of the same name (a backend's), as ingress-nginx's more_set_headers. Portico's HSTS header (http.hbs): `add_header Strict-Transport-Security $portico_hsts
 * always` evaluated a complex value per response, through the script engine and an allocation, also on plain HTTP
 * where the variable is empty: ~600 instructions per request (e2e/bench/dataplane-cg.ts); this reads the variable by
 * index. Unlike add_header's, the header is on the response before Lua's header filters run (a route's response-
 * header plugin sees it and may replace it), and a location's own add_header does not drop it.
 */

#include "ngx_http_portico_vars.h"


static ngx_http_output_header_filter_pt  ngx_http_pv_next_header_filter;


static ngx_int_t
ngx_http_pv_header_filter(ngx_http_request_t *r)
{
    ngx_uint_t                  i;
    ngx_list_part_t            *part;
    ngx_table_elt_t            *h;
    ngx_http_pv_srv_conf_t     *conf;
    ngx_http_variable_value_t  *vv;

    conf = ngx_http_get_module_srv_conf(r, ngx_http_portico_vars_module);

    if (conf->header.len == 0 || r != r->main) {
        return ngx_http_pv_next_header_filter(r);
    }

    vv = ngx_http_get_indexed_variable(r, conf->header_index);
    if (vv == NULL || vv->not_found || vv->len == 0) {
        return ngx_http_pv_next_header_filter(r);
    }

    /* The header replaces any of the same name (the backend's): ingress-nginx sets HSTS with more_set_headers. */
    part = &r->headers_out.headers.part;
    h = part->elts;

    for (i = 0; /* void */; i++) {

        if (i >= part->nelts) {
            if (part->next == NULL) {
                break;
            }
            part = part->next;
            h = part->elts;
            i = 0;
        }

        if (h[i].hash != 0 && h[i].key.len == conf->header.len
            && ngx_strncasecmp(h[i].key.data, conf->header.data, conf->header.len) == 0)
        {
            h[i].hash = 0;
        }
    }

    h = ngx_list_push(&r->headers_out.headers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    h->hash = 1;
    h->key = conf->header;
    h->value.len = vv->len;
    h->value.data = vv->data;
    h->lowcase_key = NULL;

    return ngx_http_pv_next_header_filter(r);
}


char *
ngx_http_pv_header_if_set(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_pv_srv_conf_t  *pcf = conf;

    u_char     *p;
    ngx_str_t  *value, name;

    if (pcf->header.len) {
        return "is duplicate";
    }

    value = cf->args->elts;

    /* A header name is an HTTP token. */
    if (value[1].len == 0) {
        return "needs a header name";
    }
    for (p = value[1].data; p < value[1].data + value[1].len; p++) {
        if (!(*p >= '0' && *p <= '9') && !(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z')
            && ngx_strchr("!#$%&'*+-.^_`|~", *p) == NULL)
        {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "invalid header name \"%V\"", &value[1]);
            return NGX_CONF_ERROR;
        }
    }

    if (value[2].len < 2 || value[2].data[0] != '$') {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "\"%V\" is not a variable", &value[2]);
        return NGX_CONF_ERROR;
    }

    name.data = value[2].data + 1;
    name.len = value[2].len - 1;

    pcf->header_index = ngx_http_get_variable_index(cf, &name);
    if (pcf->header_index == NGX_ERROR) {
        return NGX_CONF_ERROR;
    }

    pcf->header = value[1];
    return NGX_CONF_OK;
}


ngx_int_t
ngx_http_pv_header_init(ngx_conf_t *cf)
{
    ngx_http_pv_next_header_filter = ngx_http_top_header_filter;
    ngx_http_top_header_filter = ngx_http_pv_header_filter;
    return NGX_OK;
}
