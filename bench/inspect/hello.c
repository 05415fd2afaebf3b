/* The cold-start baseline of bench/inspect: the least a dynamically linked C program costs. */
#include <stdio.h>

int main(void) {
    puts("hello");
    return 0;
}
