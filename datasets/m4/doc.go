// Package m4 reads the M4 forecasting competition's data files: the wide
// CSV format of its training and test sets (one series per row: a quoted id
// such as "H1", then the values, empty cells after a series ends) and the
// table of official results prewarm compares itself with.
//
// The data are not part of the repository; callers pass the folder (by
// default ../shared/datasets/m4-hourly relative to the repository root).
package m4
