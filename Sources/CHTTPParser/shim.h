#ifndef FAKEAPNS_CHTTPPARSER_H
#define FAKEAPNS_CHTTPPARSER_H
#include <http_parser.h>
#endif
