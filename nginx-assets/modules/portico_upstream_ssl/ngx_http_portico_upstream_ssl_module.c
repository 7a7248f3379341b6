/*
 * Portico's upstream certificate names: TLS to a backend (proxy_pass https://, grpc_pass grpcs://) whose certificate
 * must carry one of a list of subject alternative names, DNS names or URIs, while the name sent as SNI
 * (proxy_ssl_name / grpc_ssl_name) is not checked at all. This is the Gateway API's BackendTLSPolicy with
 * subjectAltNames: its hostname is only the SNI, and the backend's certificate must have at least one of the SANs
 * it lists.
 *
 * nginx 1.22 checks a backend's certificate against one name only: with proxy_ssl_verify on, after the handshake,
 * the verification result of the chain (SSL_get_verify_result; the SSL_CTX stays SSL_VERIFY_NONE, so a bad chain
 * does not stop the handshake) and then proxy_ssl_name against the certificate (ngx_ssl_check_host). So here
 * proxy_ssl_verify (grpc_ssl_verify) stays off, and this module verifies instead, during the handshake:
 *
 *   - http{} merges run module by module over every server and location, and a module loaded by load_module comes
 *     after nginx's own: when this module's merge_loc_conf runs for a location, the proxy and gRPC modules have
 *     already merged it. Their location configurations start with ngx_http_upstream_conf_t (a public structure,
 *     laid out alike by every --with-compat build), whose "ssl" is the location's own ngx_ssl_t when the location
 *     proxies over TLS (made by their merge: ngx_http_proxy_set_ssl, ngx_http_grpc_set_ssl), NULL otherwise;
 *   - on that SSL_CTX this module loads the trusted CA file (nginx's ngx_ssl_trusted_certificate: verify depth,
 *     load_verify_locations), sets SSL_VERIFY_PEER without a verify callback (a client then aborts the handshake
 *     when verification fails; nginx's callback, which that function sets, overrides every error of the chain)
 *     and puts its own function in place of OpenSSL's X509_verify_cert() (SSL_CTX_set_cert_verify_callback). That
 *     function runs X509_verify_cert() itself (the chain, against the CA file, with the depth) and then accepts the
 *     certificate only when it carries one of the names:
 *       DNS:<name>     a DNS name among its subjectAltName dNSNames, as X509_check_host() matches them (RFC 6125: a
 *                      certificate's wildcard stands for the whole left-most label; the subject's CN never counts);
 *       DNS:*.<name>   a wildcard asked for: a dNSName that is this same wildcard (ASCII case-insensitive);
 *       URI:<uri>      a uniformResourceIdentifier exactly equal to it (a SPIFFE ID, say);
 *     otherwise the handshake fails (the alert goes to the backend), the error log says why, and nginx tries the
 *     next peer or answers 502 as it does for any failed connection.
 *   - A session is saved only after a handshake that passed (proxy_ssl_session_reuse), and each such location has a
 *     TLS context of its own, so a resumed session was verified against the same names.
 *
 * An if{} or limit_except{} block proxies with its enclosing location's TLS context (nginx shares it) and inherits the
 * enclosing location's names (the directives are not allowed in an if{} block).
 *
 * Directives (http, server, location; inherited like nginx's proxy_ssl_*):
 *   portico_upstream_ssl_verify_names name ...;          DNS:<name> or URI:<uri>, 1-16 of them
 *   portico_upstream_ssl_trusted_certificate file;       PEM CA certificates (required with the names)
 *   portico_upstream_ssl_verify_depth number;            the chain's depth, default 1 (as proxy_ssl_verify_depth)
 * A location that sets the names itself must proxy over TLS; every location checking names must have proxy_ssl_verify
 * and grpc_ssl_verify off.
 *
 * This module reads no ngx_connection_t bit field (Debian's nginx 1.22.1 has one more than the upstream sources it is
 * compiled with; see portico_h2c): only c->log, which comes before them.
 */

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>


#if !(NGX_HTTP_SSL)
#error "portico_upstream_ssl verifies TLS to backends: configure nginx --with-http_ssl_module"
#endif


extern ngx_module_t  ngx_http_proxy_module;
extern ngx_module_t  ngx_http_grpc_module;


#define PU_MAX_NAMES    16
#define PU_MAX_DNS      253
#define PU_MAX_URI      2048

#define PU_DNS          1
#define PU_URI          2


typedef struct {
    ngx_uint_t       type;          /* PU_DNS, PU_URI */
    ngx_uint_t       wildcard;      /* PU_DNS: "*.<name>" */
    ngx_str_t        value;         /* without "DNS:" or "URI:" (and a wildcard's "*."); NUL-terminated */
} ngx_http_pu_name_t;


typedef struct {
    ngx_array_t     *names;         /* ngx_http_pu_name_t; NULL: none */
    ngx_str_t        trusted;
    ngx_uint_t       depth;
    ngx_str_t        file;          /* where the names were set, for what the merge finds */
    ngx_uint_t       line;
    ngx_uint_t       in_location;   /* the names were set in a location{} (not http{} or server{}) */
} ngx_http_pu_loc_conf_t;


static void *ngx_http_pu_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_pu_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child);
static char *ngx_http_pu_names(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static ngx_int_t ngx_http_pu_parse(ngx_conf_t *cf, ngx_str_t *arg, ngx_http_pu_name_t *name);
static ngx_int_t ngx_http_pu_set(ngx_conf_t *cf, ngx_http_pu_loc_conf_t *plcf, ngx_ssl_t *ssl, const char *which);
static int ngx_http_pu_verify(X509_STORE_CTX *x509, void *arg);
static ngx_int_t ngx_http_pu_match(X509 *cert, ngx_array_t *names);


static ngx_command_t  ngx_http_pu_commands[] = {

    { ngx_string("portico_upstream_ssl_verify_names"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_1MORE,
      ngx_http_pu_names,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("portico_upstream_ssl_trusted_certificate"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_str_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_pu_loc_conf_t, trusted),
      NULL },

    { ngx_string("portico_upstream_ssl_verify_depth"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_num_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_pu_loc_conf_t, depth),
      NULL },

      ngx_null_command
};


static ngx_http_module_t  ngx_http_portico_upstream_ssl_module_ctx = {
    NULL,                                  /* preconfiguration */
    NULL,                                  /* postconfiguration */
    NULL,                                  /* create main configuration */
    NULL,                                  /* init main configuration */
    NULL,                                  /* create server configuration */
    NULL,                                  /* merge server configuration */
    ngx_http_pu_create_loc_conf,           /* create location configuration */
    ngx_http_pu_merge_loc_conf             /* merge location configuration */
};


ngx_module_t  ngx_http_portico_upstream_ssl_module = {
    NGX_MODULE_V1,
    &ngx_http_portico_upstream_ssl_module_ctx, /* module context */
    ngx_http_pu_commands,                  /* module directives */
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


/* The SSL_CTX ex_data slot that marks a context this module verifies: the names array it checks. */
static int  ngx_http_pu_ctx_index = -1;


/* ---- configuration ---- */

static void *
ngx_http_pu_create_loc_conf(ngx_conf_t *cf)
{
    ngx_http_pu_loc_conf_t  *conf;

    /* zeroed: trusted = { 0, NULL }, file = { 0, NULL }, line = 0 */
    conf = ngx_pcalloc(cf->pool, sizeof(ngx_http_pu_loc_conf_t));
    if (conf == NULL) {
        return NULL;
    }

    conf->names = NGX_CONF_UNSET_PTR;
    conf->depth = NGX_CONF_UNSET_UINT;

    return conf;
}


static char *
ngx_http_pu_names(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_pu_loc_conf_t *plcf = conf;

    ngx_str_t           *value;
    ngx_uint_t           i;
    ngx_http_pu_name_t  *name;

    if (plcf->names != NGX_CONF_UNSET_PTR) {
        return "is duplicate";
    }

    if (cf->args->nelts - 1 > PU_MAX_NAMES) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "\"%V\" takes at most %d names", &cmd->name, PU_MAX_NAMES);
        return NGX_CONF_ERROR;
    }

    plcf->names = ngx_array_create(cf->pool, cf->args->nelts - 1, sizeof(ngx_http_pu_name_t));
    if (plcf->names == NULL) {
        return NGX_CONF_ERROR;
    }

    value = cf->args->elts;

    for (i = 1; i < cf->args->nelts; i++) {
        name = ngx_array_push(plcf->names);
        if (name == NULL) {
            return NGX_CONF_ERROR;
        }

        if (ngx_http_pu_parse(cf, &value[i], name) != NGX_OK) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid name \"%V\" in \"%V\": DNS:<lower-case DNS name, \"*.\" first for a wildcard> "
                               "or URI:<absolute URI of printable ASCII without spaces>", &value[i], &cmd->name);
            return NGX_CONF_ERROR;
        }
    }

    plcf->file = cf->conf_file->file.name;
    plcf->line = cf->conf_file->line;
    plcf->in_location = (cf->cmd_type == NGX_HTTP_LOC_CONF);

    return NGX_CONF_OK;
}


/* "DNS:..." or "URI:...", checked; the value is copied NUL-terminated. */
static ngx_int_t
ngx_http_pu_parse(ngx_conf_t *cf, ngx_str_t *arg, ngx_http_pu_name_t *name)
{
    u_char      *p, *last, *label;
    ngx_uint_t   colon;

    if (arg->len > 4 && ngx_strncmp(arg->data, "DNS:", 4) == 0) {
        name->type = PU_DNS;
        p = arg->data + 4;
        last = arg->data + arg->len;

        if (last - p > PU_MAX_DNS) {
            return NGX_ERROR;
        }

        name->wildcard = (last - p > 2 && p[0] == '*' && p[1] == '.');

        if (name->wildcard) {
            p += 2;
        }

        /* labels of [a-z0-9-], 1-63 long, neither starting nor ending with "-", one dot between two */
        label = p;

        for ( /* void */ ; p <= last; p++) {
            if (p == last || *p == '.') {
                if (p - label < 1 || p - label > 63 || label[0] == '-' || p[-1] == '-') {
                    return NGX_ERROR;
                }

                label = p + 1;
                continue;
            }

            if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-')) {
                return NGX_ERROR;
            }
        }

        p = arg->data + 4 + (name->wildcard ? 2 : 0);

    } else if (arg->len > 4 && ngx_strncmp(arg->data, "URI:", 4) == 0) {
        name->type = PU_URI;
        name->wildcard = 0;
        p = arg->data + 4;
        last = arg->data + arg->len;

        if (last - p > PU_MAX_URI) {
            return NGX_ERROR;
        }

        /* a scheme ([a-zA-Z][a-zA-Z0-9+.-]*), ":", and more; printable ASCII only, no space */
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) {
            return NGX_ERROR;
        }

        colon = 0;

        for (label = p; label < last; label++) {
            if (*label <= 0x20 || *label >= 0x7f) {
                return NGX_ERROR;
            }

            if (colon == 0) {
                if (*label == ':') {
                    colon = label - p;

                } else if (!((*label >= 'a' && *label <= 'z') || (*label >= 'A' && *label <= 'Z')
                             || (*label >= '0' && *label <= '9') || *label == '+' || *label == '.' || *label == '-'))
                {
                    return NGX_ERROR;
                }
            }
        }

        if (colon == 0 || p + colon + 1 == last) {
            return NGX_ERROR;
        }

    } else {
        return NGX_ERROR;
    }

    name->value.len = last - p;
    name->value.data = ngx_pnalloc(cf->pool, name->value.len + 1);
    if (name->value.data == NULL) {
        return NGX_ERROR;
    }

    ngx_cpystrn(name->value.data, p, name->value.len + 1);

    return NGX_OK;
}


static char *
ngx_http_pu_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
    ngx_http_pu_loc_conf_t *prev = parent;
    ngx_http_pu_loc_conf_t *conf = child;

    ngx_uint_t                 here, n;
    ngx_http_upstream_conf_t  *proxy, *grpc;

    /* set in this very location (an http{} or server{} one only hands them down to the locations) */
    here = (conf->names != NGX_CONF_UNSET_PTR && conf->in_location);

    ngx_conf_merge_ptr_value(conf->names, prev->names, NULL);
    ngx_conf_merge_str_value(conf->trusted, prev->trusted, "");
    ngx_conf_merge_uint_value(conf->depth, prev->depth, 1);

    if (conf->file.len == 0) {
        conf->file = prev->file;
        conf->line = prev->line;
    }

    if (conf->names == NULL) {
        return NGX_CONF_OK;
    }

    if (conf->trusted.len == 0) {
        ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                      "\"portico_upstream_ssl_verify_names\" in %V:%ui has no \"portico_upstream_ssl_trusted_certificate\"",
                      &conf->file, conf->line);
        return NGX_CONF_ERROR;
    }

    /*
     * This location's configurations of the proxy and gRPC modules (cf->ctx is the location's while it is merged),
     * already merged: each begins with its ngx_http_upstream_conf_t.
     */
    proxy = ngx_http_conf_get_module_loc_conf(cf, ngx_http_proxy_module);
    grpc = ngx_http_conf_get_module_loc_conf(cf, ngx_http_grpc_module);

    n = 0;

    if (proxy->ssl) {
        if (proxy->ssl_verify) {
            ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                          "\"portico_upstream_ssl_verify_names\" in %V:%ui: \"proxy_ssl_verify\" must be off there "
                          "(it would check proxy_ssl_name, which is only the SNI)", &conf->file, conf->line);
            return NGX_CONF_ERROR;
        }

        if (ngx_http_pu_set(cf, conf, proxy->ssl, "proxy") != NGX_OK) {
            return NGX_CONF_ERROR;
        }

        n++;
    }

    if (grpc->ssl) {
        if (grpc->ssl_verify) {
            ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                          "\"portico_upstream_ssl_verify_names\" in %V:%ui: \"grpc_ssl_verify\" must be off there "
                          "(it would check grpc_ssl_name, which is only the SNI)", &conf->file, conf->line);
            return NGX_CONF_ERROR;
        }

        if (ngx_http_pu_set(cf, conf, grpc->ssl, "grpc") != NGX_OK) {
            return NGX_CONF_ERROR;
        }

        n++;
    }

    if (n == 0 && here) {
        ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                      "\"portico_upstream_ssl_verify_names\" in %V:%ui: the location proxies over no TLS "
                      "(no proxy_pass https:// nor grpc_pass grpcs://)", &conf->file, conf->line);
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


/* Makes one TLS context (a location's, for the proxy or the gRPC module) verify the chain and the names. */
static ngx_int_t
ngx_http_pu_set(ngx_conf_t *cf, ngx_http_pu_loc_conf_t *plcf, ngx_ssl_t *ssl, const char *which)
{
    void  *mark;

    if (ngx_http_pu_ctx_index == -1) {
        ngx_http_pu_ctx_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, NULL);

        if (ngx_http_pu_ctx_index == -1) {
            ngx_ssl_error(NGX_LOG_EMERG, cf->log, 0, "SSL_CTX_get_ex_new_index() failed");
            return NGX_ERROR;
        }
    }

    mark = SSL_CTX_get_ex_data(ssl->ctx, ngx_http_pu_ctx_index);

    if (mark == plcf->names) {
        /* an if{} or limit_except{} block with its location's context and names */
        return NGX_OK;
    }

    if (mark != NULL) {
        ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                      "\"portico_upstream_ssl_verify_names\" in %V:%ui: this block proxies with its enclosing "
                      "location's TLS context (%s), which checks other names: set them there",
                      &plcf->file, plcf->line, which);
        return NGX_ERROR;
    }

    /* the verify depth, and the CA file (made absolute by nginx, against its prefix) */
    if (ngx_ssl_trusted_certificate(cf, ssl, &plcf->trusted, (ngx_int_t) plcf->depth) != NGX_OK) {
        return NGX_ERROR;
    }

    /*
     * The handshake fails when verification does. No verify callback: nginx's (ngx_ssl_verify_callback, which
     * ngx_ssl_trusted_certificate has just set) returns 1 whatever the chain's error, as nginx reads the result
     * after the handshake; it would make X509_verify_cert() accept a certificate of any CA.
     */
    SSL_CTX_set_verify(ssl->ctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_cert_verify_callback(ssl->ctx, ngx_http_pu_verify, plcf->names);

    if (SSL_CTX_set_ex_data(ssl->ctx, ngx_http_pu_ctx_index, plcf->names) == 0) {
        ngx_ssl_error(NGX_LOG_EMERG, cf->log, 0, "SSL_CTX_set_ex_data() failed");
        return NGX_ERROR;
    }

    return NGX_OK;
}


/* ---- the handshake ---- */

/*
 * In place of X509_verify_cert() for the backend's certificate: the chain first, then the names. 1 accepts, 0 fails
 * the handshake (SSL_VERIFY_PEER).
 */
static int
ngx_http_pu_verify(X509_STORE_CTX *x509, void *arg)
{
    ngx_array_t *names = arg;

    X509              *cert;
    ngx_connection_t  *c;
    ngx_ssl_conn_t    *ssl_conn;

    if (X509_verify_cert(x509) != 1 || X509_STORE_CTX_get_error(x509) != X509_V_OK) {
        /* the chain does not verify: OpenSSL reports why */
        return 0;
    }

    cert = X509_STORE_CTX_get0_cert(x509);

    if (cert != NULL && ngx_http_pu_match(cert, names) == NGX_OK) {
        return 1;
    }

    X509_STORE_CTX_set_error(x509, X509_V_ERR_HOSTNAME_MISMATCH);

    ssl_conn = X509_STORE_CTX_get_ex_data(x509, SSL_get_ex_data_X509_STORE_CTX_idx());
    c = ssl_conn ? ngx_ssl_get_connection(ssl_conn) : NULL;

    if (c != NULL) {
        ngx_log_error(NGX_LOG_ERR, c->log, 0,
                      "upstream SSL certificate has none of the names of portico_upstream_ssl_verify_names");
    }

    return 0;
}


/* NGX_OK when the certificate's subjectAltName has one of the names. */
static ngx_int_t
ngx_http_pu_match(X509 *cert, ngx_array_t *names)
{
    int                   k, count;
    size_t                len;
    ngx_int_t             rc;
    ngx_uint_t            i;
    const u_char         *data;
    GENERAL_NAME         *gen;
    GENERAL_NAMES        *gens;
    ngx_http_pu_name_t   *name;

    name = names->elts;

    /* DNS names: RFC 6125 matching, the certificate's wildcards included; never the subject's CN */
    for (i = 0; i < names->nelts; i++) {
        if (name[i].type == PU_DNS && !name[i].wildcard
            && X509_check_host(cert, (const char *) name[i].value.data, name[i].value.len,
                               X509_CHECK_FLAG_NEVER_CHECK_SUBJECT|X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS, NULL) == 1)
        {
            return NGX_OK;
        }
    }

    gens = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
    if (gens == NULL) {
        return NGX_DECLINED;
    }

    rc = NGX_DECLINED;
    count = sk_GENERAL_NAME_num(gens);

    for (k = 0; k < count && rc != NGX_OK; k++) {
        gen = sk_GENERAL_NAME_value(gens, k);

        if (gen->type != GEN_DNS && gen->type != GEN_URI) {
            continue;
        }

        /* dNSName and uniformResourceIdentifier are both IA5Strings */
        data = ASN1_STRING_get0_data(gen->d.ia5);
        len = (size_t) ASN1_STRING_length(gen->d.ia5);

        for (i = 0; i < names->nelts; i++) {
            if (gen->type == GEN_URI && name[i].type == PU_URI) {
                if (len == name[i].value.len && ngx_memcmp(data, name[i].value.data, len) == 0) {
                    rc = NGX_OK;
                    break;
                }

            } else if (gen->type == GEN_DNS && name[i].type == PU_DNS && name[i].wildcard) {
                /* the wildcard itself: "*." and the rest, ASCII case-insensitive */
                if (len == name[i].value.len + 2 && data[0] == '*' && data[1] == '.'
                    && ngx_strncasecmp((u_char *) data + 2, name[i].value.data, name[i].value.len) == 0)
                {
                    rc = NGX_OK;
                    break;
                }
            }
        }
    }

    GENERAL_NAMES_free(gens);

    return rc;
}
