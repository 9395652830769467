/* Allocation failures on demand, for the tests of the C++ shim
 * (tests/fault_new.cc replaces the global operator new of the test program
 * that links it; C's malloc is left alone). */
#ifndef NMT_TESTS_FAULT_NEW_H
#define NMT_TESTS_FAULT_NEW_H

/* What the failing allocation throws. */
enum {
    FAULT_BAD_ALLOC,    /* std::bad_alloc: memory ran out */
    FAULT_STD_ERROR,    /* std::length_error: a std::exception of another kind */
    FAULT_NOT_STD,      /* an int: an exception that is no std::exception */
};

/* Makes allocation number `after` from now (0: the next one) throw `kind`,
 * once; the allocations after it succeed again. */
void fault_new_arm(long after, int kind);
/* Stops any failure still to come; returns whether one was thrown since
 * fault_new_arm. */
int fault_new_disarm(void);

#endif
