// Package errcode is the one table of error codes: the code a failed call
// carries in Go ([Of]), in the action log and history, and on the code
// property of the error a script catches (the SDK's TabErrorCode union is
// generated from [Codes]).
//
// A package returns an error with a code by giving it an ErrorCode method
// ([Coder]); Of finds the first one in an error chain. Add a code here and
// nowhere else, then run go generate ./runner to update the SDK.
package errcode
