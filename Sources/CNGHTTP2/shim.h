#ifndef FAKEAPNS_CNGHTTP2_H
#define FAKEAPNS_CNGHTTP2_H
#include <nghttp2/nghttp2.h>
#endif
