/*
 * What the parts of Portico's variables module share: the module, and its server configuration, which holds the
 * directives of two kinds of blocks (nginx creates it for every server and upstream block).
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


extern ngx_module_t  ngx_http_portico_vars_module;

void *ngx_http_pv_create_srv_conf(ngx_conf_t *cf);
char *ngx_http_pv_peer_handoff(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
char *ngx_http_pv_data_generation(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
char *ngx_http_pv_header_if_set(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
ngx_int_t ngx_http_pv_header_init(ngx_conf_t *cf);

#endif /* _NGX_HTTP_PORTICO_VARS_H_INCLUDED_ */
