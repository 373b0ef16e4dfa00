package database

// CountSlots is countSlots, for the tests.
const CountSlots = countSlots
