#ifndef PC_JWT_SHIM_H
#define PC_JWT_SHIM_H
#include <jwt.h>
#endif
