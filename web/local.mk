# web/: the browser UI, served by the server from $(pkgdatadir)/web.
