// Questions the page asks before it does something that cannot be undone
// (discarding unsaved changes, overwriting a file, stopping a run): an
// alert dialog, awaited as a promise of the answer.
import { createContext, useCallback, useContext, useRef, useState } from 'react';
import { AlertDialog, Button, Flex } from '@radix-ui/themes';

const Context = createContext(async () => true);

/** Where `useConfirm` asks its questions. */
export function ConfirmProvider({ children }) {
  const [question, setQuestion] = useState(null);
  const answer = useRef(null);
  const ask = useCallback(
    ({ title, description, action = 'Continue', color = 'red' }) =>
      new Promise((resolve) => {
        // A question still open is answered no: one at a time.
        answer.current?.(false);
        answer.current = resolve;
        setQuestion({ title, description, action, color });
      }),
    [],
  );
  const close = (yes) => {
    answer.current?.(yes);
    answer.current = null;
    setQuestion(null);
  };
  return (
    <Context.Provider value={ask}>
      {children}
      <AlertDialog.Root open={question !== null} onOpenChange={(open) => !open && close(false)}>
        <AlertDialog.Content maxWidth="460px">
          <AlertDialog.Title>{question?.title}</AlertDialog.Title>
          <AlertDialog.Description size="2">{question?.description}</AlertDialog.Description>
          <Flex gap="3" mt="4" justify="end">
            <AlertDialog.Cancel>
              <Button variant="soft" color="gray" onClick={() => close(false)}>
                Cancel
              </Button>
            </AlertDialog.Cancel>
            <AlertDialog.Action>
              <Button color={question?.color} onClick={() => close(true)}>
                {question?.action}
              </Button>
            </AlertDialog.Action>
          </Flex>
        </AlertDialog.Content>
      </AlertDialog.Root>
    </Context.Provider>
  );
}

/** `ask({title, description, action, color})`: resolves to whether the user agreed. */
export function useConfirm() {
  return useContext(Context);
}
