/** See full-collection.mjs. */
export declare function fullCollection(): () => void;
