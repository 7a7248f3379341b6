/*
 * What the parts of Portico's variables module share: the module, its server configuration, which holds the
 * directives of two kinds of blocks (nginx creates it for every server and upstream block), its location configuration,
 * and a word-at-a-time byte test.
 */
#ifndef _NGX_HTTP_PORTICO_VARS_H_INCLUDED_
#define _NGX_HTTP_PORTICO_VARS_H_INCLUDED_

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>


typedef struct {
    /* An upstream block's portico_peer_handoff (ngx_http_portico_vars_peer.c). */
    ngx_http_upstream_init_pt        original_init_upstream;
    ngx_http_upstream_init_peer_pt   original_init_peer;
    /* A server block's portico_header_if_set (ngx_http_portico_vars_header.c): the header, empty when none. */
    ngx_str_t                        header;
    ngx_int_t                        header_index;
} ngx_http_pv_srv_conf_t;


/* A location's portico_proxy_header list (ngx_http_portico_vars_proxy_headers.c): NULL when "off" or none. */
typedef struct {
    ngx_array_t                     *proxy_headers;
} ngx_http_pv_loc_conf_t;


/* Bytes of a 64-bit word at a time: whether some byte is zero (exact for "any byte": it flags no word that has none). */
#define NGX_HTTP_PV_ONES   0x0101010101010101ULL
#define NGX_HTTP_PV_HIGHS  0x8080808080808080ULL
#define ngx_http_pv_zero_byte(x)  (((x) - NGX_HTTP_PV_ONES) & ~(x) & NGX_HTTP_PV_HIGHS)


extern ngx_module_t  ngx_http_portico_vars_module;

void *ngx_http_pv_create_srv_conf(ngx_conf_t *cf);
char *ngx_http_pv_peer_handoff(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
char *ngx_http_pv_data_generation(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
char *ngx_http_pv_header_if_set(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
ngx_int_t ngx_http_pv_header_init(ngx_conf_t *cf);
ngx_int_t ngx_http_pv_name(ngx_conf_t *cf, ngx_str_t *arg, ngx_str_t *name);
void *ngx_http_pv_create_loc_conf(ngx_conf_t *cf);
char *ngx_http_pv_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child);
char *ngx_http_pv_proxy_header(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
ngx_int_t ngx_http_pv_write_proxy_headers(ngx_http_request_t *r);
int ngx_http_portico_vars_generation(void);
int ngx_http_portico_vars_peer_handoff(ngx_http_request_t *r, const u_char *sa, size_t salen, const u_char *name,
    size_t name_len, int more);
ngx_int_t ngx_http_pv_peer_handoff_native(ngx_http_request_t *r, struct sockaddr *sa, socklen_t salen, ngx_str_t *name,
    ngx_uint_t more, ngx_msec_t *timeouts);
int ngx_http_portico_vars_peer_native(ngx_http_request_t *r);
ngx_int_t ngx_http_pv_route_add_variables(ngx_conf_t *cf);
ngx_int_t ngx_http_pv_index_of(const u_char *name, size_t len, ngx_uint_t changeable);
void ngx_http_portico_vars_host_uri(ngx_http_request_t *r, const u_char **host, size_t *host_len, const u_char **uri,
    size_t *uri_len);

#endif /* _NGX_HTTP_PORTICO_VARS_H_INCLUDED_ */
