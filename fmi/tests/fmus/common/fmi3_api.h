/* The FMI 3.0 types the test FMUs use, declared from the standard
 * (section 2.2.2); written here so that no Modelica header is needed. */
#ifndef TANDEM_FMI3_API_H
#define TANDEM_FMI3_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef void *fmi3Instance;
typedef void *fmi3InstanceEnvironment;
typedef void *fmi3FMUState;
typedef uint32_t fmi3ValueReference;
typedef double fmi3Float64;
typedef int32_t fmi3Int32;
typedef bool fmi3Boolean;
typedef const char *fmi3String;

typedef enum { fmi3OK, fmi3Warning, fmi3Discard, fmi3Error, fmi3Fatal } fmi3Status;

typedef void (*fmi3LogMessageCallback)(fmi3InstanceEnvironment, fmi3Status, fmi3String category, fmi3String message);
typedef void (*fmi3IntermediateUpdateCallback)(fmi3InstanceEnvironment, fmi3Float64 time, fmi3Boolean setRequested,
                                               fmi3Boolean getAllowed, fmi3Boolean stepFinished,
                                               fmi3Boolean canReturnEarly, fmi3Boolean *earlyReturnRequested,
                                               fmi3Float64 *earlyReturnTime);

#define FMI3_EXPORT __attribute__((visibility("default")))

#endif
